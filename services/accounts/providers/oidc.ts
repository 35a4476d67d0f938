import * as client from 'openid-client';
import { sha256Hex } from '../../../shared/crypto.ts';
import type { EnvRequirement } from '../../../shared/http/action.ts';
import { checkProviderUrl, exchangeError, unreachable } from './errors.ts';
import type { EnvGet, OAuthProfile, OAuthProvider, ProviderId } from './types.ts';
import { ProviderError } from './types.ts';

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string | undefined;
}

export interface OidcSpec {
  id: ProviderId;
  name: string;
  env: readonly EnvRequirement[];
  /** The issuer and client from env, or the keys still missing. */
  settings(env: EnvGet): OidcSettings | { missing: string[] };
}

const TIMEOUT_S = 10;
const SCOPE = 'openid email profile';

/**
 * Any OpenID Connect provider, found by discovery. openid-client does the protocol: discovery,
 * the authorization URL, the code exchange with PKCE, ID token validation (issuer, audience,
 * signature, nonce) and the userinfo call.
 */
export function oidcProvider(spec: OidcSpec): OAuthProvider {
  /** Discovered configurations by issuer and client (a changed env value discovers again). */
  const configurations = new Map<string, Promise<client.Configuration>>();

  function settingsOf(env: EnvGet): OidcSettings {
    const settings = spec.settings(env);
    if ('missing' in settings) throw new ProviderError('exchange_failed', `${spec.name} is not configured`);
    return settings;
  }

  function configuration(settings: OidcSettings): Promise<client.Configuration> {
    const key = [settings.issuer, settings.clientId, sha256Hex(settings.clientSecret ?? '')].join('\n');
    let found = configurations.get(key);
    if (!found) {
      found = discover(settings);
      configurations.set(key, found);
      found.catch(() => configurations.delete(key));
    }
    return found;
  }

  async function discover({ issuer, clientId, clientSecret }: OidcSettings): Promise<client.Configuration> {
    let url: URL;
    try {
      url = new URL(issuer);
    } catch {
      throw new ProviderError('unreachable', `${spec.name}: the issuer "${issuer}" is not a URL`);
    }
    const { insecure } = checkProviderUrl(url, spec.name);
    let discovered: client.Configuration;
    try {
      discovered = await client.discovery(url, clientId, undefined, undefined, {
        timeout: TIMEOUT_S,
        execute: insecure ? [client.allowInsecureRequests] : [],
      });
    } catch (error) {
      throw unreachable(error, spec.name, 'OpenID discovery');
    }
    const server = discovered.serverMetadata();
    // Basic is the default every provider supports; post only where the provider offers nothing else.
    const methods = server.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
    const auth =
      clientSecret === undefined
        ? client.None()
        : methods.includes('client_secret_basic')
          ? client.ClientSecretBasic(clientSecret)
          : client.ClientSecretPost(clientSecret);
    const config = new client.Configuration(server, clientId, clientSecret, auth);
    config.timeout = TIMEOUT_S;
    if (insecure) client.allowInsecureRequests(config);
    return config;
  }

  return {
    id: spec.id,
    name: spec.name,
    env: spec.env,
    missing(env) {
      const settings = spec.settings(env);
      return 'missing' in settings ? settings.missing : [];
    },
    async authorizationUrl(env, { redirectUri, state, codeChallenge, nonce }) {
      const config = await configuration(settingsOf(env));
      return client.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        response_type: 'code',
        scope: SCOPE,
        state,
        nonce,
        code_challenge: codeChallenge,
        code_challenge_method: 'S256',
      });
    },
    async exchange(env, { callbackUrl, state, codeVerifier, nonce }): Promise<OAuthProfile> {
      try {
        const config = await configuration(settingsOf(env));
        const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
          pkceCodeVerifier: codeVerifier,
          expectedState: state,
          expectedNonce: nonce,
          idTokenExpected: true,
        });
        const claims = tokens.claims();
        if (!claims) throw new ProviderError('exchange_failed', `${spec.name} returned no ID token`);
        let profile: Record<string, unknown> = claims;
        // Many providers put the email only in userinfo, not in the ID token.
        if (typeof claims.email !== 'string' && config.serverMetadata().userinfo_endpoint) {
          profile = { ...(await client.fetchUserInfo(config, tokens.access_token, claims.sub)), ...claims };
        }
        const email = typeof profile.email === 'string' && profile.email !== '' ? profile.email : null;
        return {
          subject: claims.sub,
          email,
          emailVerified: email !== null && profile.email_verified === true,
          name: typeof profile.name === 'string' && profile.name !== '' ? profile.name : null,
        };
      } catch (error) {
        throw exchangeError(error, spec.name);
      }
    },
  };
}

/** Any OpenID Connect issuer: `STUDIO_OIDC_ISSUER`, `STUDIO_OIDC_CLIENT_ID`, `STUDIO_OIDC_CLIENT_SECRET`. */
export function genericOidcProvider(): OAuthProvider {
  return oidcProvider({
    id: 'oidc',
    name: 'OpenID provider',
    env: [
      {
        key: 'STUDIO_OIDC_ISSUER',
        description:
          'OpenID Connect sign-in: the issuer URL (discovered from /.well-known/openid-configuration)',
        required: false,
      },
      { key: 'STUDIO_OIDC_CLIENT_ID', description: 'OpenID Connect sign-in: the client id', required: false },
      {
        key: 'STUDIO_OIDC_CLIENT_SECRET',
        description: 'OpenID Connect sign-in: the client secret (leave unset for a public client)',
        required: false,
      },
    ],
    settings(env) {
      const issuer = env('STUDIO_OIDC_ISSUER');
      const clientId = env('STUDIO_OIDC_CLIENT_ID');
      if (issuer === undefined || clientId === undefined) {
        return {
          missing: [
            ...(issuer === undefined ? ['STUDIO_OIDC_ISSUER'] : []),
            ...(clientId === undefined ? ['STUDIO_OIDC_CLIENT_ID'] : []),
          ],
        };
      }
      return { issuer, clientId, clientSecret: env('STUDIO_OIDC_CLIENT_SECRET') };
    },
  });
}
