import * as client from 'openid-client';
import { messageOf } from '../../../shared/errors.ts';
import { ProviderError } from './types.ts';

/** Checks of the provider's answer that fail when the code or ID token is not this flow's. */
const FORGED = new Set([
  'OAUTH_JWT_CLAIM_COMPARISON_FAILED',
  'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED',
  'OAUTH_JWT_TIMESTAMP_CHECK_FAILED',
  'OAUTH_KEY_SELECTION_FAILED',
]);

/** Token endpoint errors that mean "not this code" (GitHub says `bad_verification_code`). */
const CODE_REFUSED = new Set(['invalid_grant', 'bad_verification_code']);

function isNetworkError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return (
    (error instanceof TypeError && error.message === 'fetch failed') ||
    error.name === 'TimeoutError' ||
    error.name === 'AbortError'
  );
}

/** Turns whatever openid-client (or fetch) threw during an exchange into a ProviderError. */
export function exchangeError(error: unknown, provider: string): ProviderError {
  if (error instanceof ProviderError) return error;
  if (error instanceof client.ResponseBodyError) {
    const detail = error.error_description ? `${error.error}: ${error.error_description}` : error.error;
    return CODE_REFUSED.has(error.error)
      ? new ProviderError('code_rejected', `${provider} refused the code (${detail})`, error.error)
      : new ProviderError('exchange_failed', `${provider} refused the exchange (${detail})`, error.error);
  }
  if (error instanceof client.WWWAuthenticateChallengeError) {
    return new ProviderError(
      'exchange_failed',
      `${provider} refused our client credentials`,
      'invalid_client',
    );
  }
  if (isNetworkError(error)) {
    return new ProviderError('unreachable', `${provider} could not be reached`);
  }
  if (error instanceof client.ClientError && error.code !== undefined && FORGED.has(error.code)) {
    return new ProviderError(
      'code_rejected',
      `${provider}'s answer does not belong to this sign-in (${messageOf(error)})`,
    );
  }
  return new ProviderError('exchange_failed', `the exchange with ${provider} failed (${messageOf(error)})`);
}

/** A fetch whose failure means the provider is unreachable (discovery, user APIs). */
export function unreachable(error: unknown, provider: string, what: string): ProviderError {
  if (error instanceof ProviderError) return error;
  return new ProviderError('unreachable', `${what} at ${provider} failed (${messageOf(error)})`);
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** HTTPS, or plain HTTP to this machine (a provider run for development or tests). */
export function checkProviderUrl(url: URL, provider: string): { insecure: boolean } {
  if (url.protocol === 'https:') return { insecure: false };
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return { insecure: true };
  throw new ProviderError('unreachable', `${provider} must be reached over https (${url.origin})`);
}
