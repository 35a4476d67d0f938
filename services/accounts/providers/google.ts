import { oidcProvider } from './oidc.ts';
import type { OAuthProvider } from './types.ts';

export const GOOGLE_ISSUER = 'https://accounts.google.com';

/** Google is an OpenID Connect issuer: the OIDC flow with Google's issuer and an OAuth client of yours. */
export function googleProvider(issuer = GOOGLE_ISSUER): OAuthProvider {
  return oidcProvider({
    id: 'google',
    name: 'Google',
    env: [
      {
        key: 'GOOGLE_CLIENT_ID',
        description: 'Google sign-in: the OAuth client id (Google Cloud console, "Web application")',
        required: false,
      },
      {
        key: 'GOOGLE_CLIENT_SECRET',
        description: 'Google sign-in: the OAuth client secret',
        required: false,
      },
    ],
    settings(env) {
      const clientId = env('GOOGLE_CLIENT_ID');
      const clientSecret = env('GOOGLE_CLIENT_SECRET');
      if (clientId === undefined || clientSecret === undefined) {
        return {
          missing: [
            ...(clientId === undefined ? ['GOOGLE_CLIENT_ID'] : []),
            ...(clientSecret === undefined ? ['GOOGLE_CLIENT_SECRET'] : []),
          ],
        };
      }
      return { issuer, clientId, clientSecret };
    },
  });
}
