import type { EnvRequirement } from '../../../shared/http/action.ts';

export type ProviderId = 'oidc' | 'google' | 'github';

/** Reads an env value (the env store over the process env). */
export type EnvGet = (key: string) => string | undefined;

/** Who signed in, as the provider vouches for it. */
export interface OAuthProfile {
  /** The provider's stable id of the person (OIDC `sub`, GitHub's numeric user id). */
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
}

export interface AuthorizationRequest {
  redirectUri: string;
  state: string;
  /** S256 PKCE challenge of the flow's verifier. */
  codeChallenge: string;
  nonce: string;
}

export interface CodeExchange {
  /** The callback URL as the provider sent the browser to it: the flow's redirect URI and the query. */
  callbackUrl: URL;
  state: string;
  codeVerifier: string;
  nonce: string;
}

/** Why talking to a provider failed, in the terms of the flow (see OAuthFailureReason). */
export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  constructor(
    readonly kind: 'code_rejected' | 'exchange_failed' | 'unreachable',
    message: string,
    readonly providerError: string | null = null,
  ) {
    super(message);
  }
}

/** A sign-in provider: its env keys, and the two calls of the authorization code flow. */
export interface OAuthProvider {
  id: ProviderId;
  name: string;
  env: readonly EnvRequirement[];
  /** The keys that must still be set before the provider can be used (empty when it can). */
  missing(env: EnvGet): string[];
  authorizationUrl(env: EnvGet, request: AuthorizationRequest): Promise<URL>;
  exchange(env: EnvGet, exchange: CodeExchange): Promise<OAuthProfile>;
}
