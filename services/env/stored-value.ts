import type { SecretBox } from '../../shared/crypto.ts';
import { containsCredentials } from '../../shared/scrub-credentials.ts';
import type { StoredValue } from './env.ts';

/**
 * Every value is encrypted unless the admin marks it public. A public value that holds a credential
 * anyway (a URL's `user:password@`, a `?token=` parameter, a key-like `sk-…`) is encrypted all the
 * same: the log keeps it forever, and the gateway reads the plaintext either way.
 */
export function storedValue(value: string, isPublic: boolean, box: SecretBox): StoredValue {
  return isPublic && !containsCredentials(value)
    ? { secret: false, value }
    : { secret: true, sealed: box.encrypt(value) };
}
