import { githubProvider } from './github.ts';
import { googleProvider } from './google.ts';
import { genericOidcProvider } from './oidc.ts';
import type { OAuthProvider, ProviderId } from './types.ts';

export const PROVIDER_IDS = ['oidc', 'google', 'github'] as const satisfies readonly ProviderId[];

/** The sign-in providers, each enabled by its env keys. */
export function builtinSignInProviders(): Map<ProviderId, OAuthProvider> {
  return new Map<ProviderId, OAuthProvider>([
    ['oidc', genericOidcProvider()],
    ['google', googleProvider()],
    ['github', githubProvider()],
  ]);
}
