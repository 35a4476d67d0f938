import { randomBytes } from 'node:crypto';
import type { SecretBox } from '../../shared/crypto.ts';

/** 32 letters and digits nobody misreads (no I, O, 0, 1): 5 bits a character. */
const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const LENGTH = 8;

/**
 * The one-time code the OAuth callback shows the browser that signed in (40 bits; with at most
 * `MAX_CODE_FAILURES` guesses a flow, out of reach), as the person reads it: `ABCD-EFGH`.
 */
export function newSignInCode(): string {
  const chars = [...randomBytes(LENGTH)].map((byte) => ALPHABET[byte % ALPHABET.length]).join('');
  return `${chars.slice(0, 4)}-${chars.slice(4)}`;
}

/** The code as typed, without case, spaces or dashes. */
export function normalizeSignInCode(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, '');
}

/** What the log keeps of a flow's code: a digest keyed by the master key, bound to the flow. */
export function signInCodeHash(secrets: SecretBox, flowId: string, code: string): string {
  return secrets.mac('oauth-sign-in-code', `${flowId}:${normalizeSignInCode(code)}`);
}
