import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  hash,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';

export function sha256Hex(value: string): string {
  return hash('sha256', value, 'hex');
}

/** Compares two secrets in time independent of where they differ (and of their lengths). */
export function secretEquals(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

export const TOKEN_PREFIX = 'stk_';

/** `stk_` + 43 base64url characters (32 random bytes). */
export function newUserToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

export function looksLikeUserToken(value: string): boolean {
  return /^stk_[A-Za-z0-9_-]{43}$/.test(value);
}

/** A short random id with a readable prefix, e.g. `tok_3fK9x…`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}

const CIPHER_VERSION = 'v1';

/** AES-256-GCM under the master key: `v1.<iv>.<tag>.<ciphertext>`, base64url parts. */
export class SecretBox {
  readonly #key: Buffer;
  readonly #macKeys = new Map<string, Buffer>();

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('the master key must be 32 bytes');
    this.#key = key;
  }

  encrypt(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [CIPHER_VERSION, iv, cipher.getAuthTag(), body]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join('.');
  }

  /**
   * HMAC-SHA256 (hex) of `value` under a key derived from the master key for `purpose` (HKDF), so a
   * value with little entropy (an email, a short code) cannot be guessed back from its digest
   * without the master key, and digests made for one purpose are useless for another.
   */
  mac(purpose: string, value: string): string {
    let key = this.#macKeys.get(purpose);
    if (!key) {
      key = Buffer.from(hkdfSync('sha256', this.#key, Buffer.alloc(0), `studio-mac:${purpose}`, 32));
      this.#macKeys.set(purpose, key);
    }
    return createHmac('sha256', key).update(value, 'utf8').digest('hex');
  }

  decrypt(ciphertext: string): string {
    const [version, iv, tag, body] = ciphertext.split('.');
    if (version !== CIPHER_VERSION || !iv || !tag || body === undefined)
      throw new Error('not an encrypted value');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString(
      'utf8',
    );
  }
}

/** Accepts 64 hex characters or base64 of 32 bytes. */
export function parseMasterKey(value: string): Buffer {
  const trimmed = value.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  const decoded = Buffer.from(trimmed, 'base64');
  if (decoded.length === 32) return decoded;
  throw new Error('STUDIO_MASTER_KEY must be 64 hex characters or the base64 of 32 bytes');
}
