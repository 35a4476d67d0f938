import { randomBytes } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';
import type { SecretBox } from '../../shared/crypto.ts';

/** Argon2id (the library's algorithm by default), 19 MiB, 2 passes, 1 lane: OWASP's recommended floor. */
const ARGON2 = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const MIN_PASSWORD_LENGTH = 8;
/** Longer inputs are refused before hashing, so nobody makes the gateway hash megabytes. */
export const MAX_PASSWORD_LENGTH = 1024;

/**
 * Password hashing. The PHC string is sealed with the master key before it goes into an event, so a
 * reader of the log (or of a database dump without the key) cannot even try to crack it.
 */
export class Passwords {
  #dummy: Promise<string> | undefined;

  constructor(private readonly box: SecretBox) {}

  async hashAndSeal(password: string): Promise<string> {
    return this.box.encrypt(await hash(password, ARGON2));
  }

  /**
   * Whether `password` matches the sealed hash. Without a hash (unknown email, an account with no
   * password) a dummy hash is verified instead, so every "no" takes as long as a wrong password.
   */
  async verify(sealedHash: string | null, password: string): Promise<boolean> {
    const phc = sealedHash === null ? undefined : this.#open(sealedHash);
    if (phc === undefined) {
      await verify(await this.#dummyHash(), password).catch(() => false);
      return false;
    }
    return verify(phc, password).catch(() => false);
  }

  /** Computes the dummy hash now rather than at the first unknown email (whose answer would be slower). */
  warmUp(): Promise<string> {
    return this.#dummyHash();
  }

  #open(sealedHash: string): string | undefined {
    try {
      return this.box.decrypt(sealedHash);
    } catch {
      return undefined;
    }
  }

  #dummyHash(): Promise<string> {
    this.#dummy ??= hash(randomBytes(32).toString('base64url'), ARGON2);
    return this.#dummy;
  }
}
