import { randomBytes } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';
import { BoundedSemaphore, SemaphoreFull } from '../../shared/bounded-semaphore.ts';
import type { SecretBox } from '../../shared/crypto.ts';
import { ApiError } from '../../shared/errors.ts';

/** Argon2id (the library's algorithm by default), 19 MiB, 2 passes, 1 lane: OWASP's recommended floor. */
const ARGON2 = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const MIN_PASSWORD_LENGTH = 8;
/** Longer inputs are refused before hashing, so nobody makes the gateway hash megabytes. */
export const MAX_PASSWORD_LENGTH = 1024;

/**
 * Argon2 runs on libuv's thread pool (4 threads), which file I/O and DNS share: two at once leave
 * room for the rest of the process, and a short queue beyond them is all a burst may fill (the
 * next are refused at once with a 503).
 */
export const ARGON2_SLOTS = 2;
export const ARGON2_QUEUE = 16;

/**
 * Password hashing. The PHC string is encrypted with the master key before it goes into an event, so a
 * reader of the log (or of a database dump without the key) cannot even try to crack it.
 */
export class Passwords {
  #dummy: Promise<{ encrypted: string; phc: string }> | undefined;

  constructor(
    private readonly box: SecretBox,
    private readonly slots = new BoundedSemaphore(ARGON2_SLOTS, ARGON2_QUEUE),
  ) {}

  async hashAndEncrypt(password: string): Promise<string> {
    return this.box.encrypt(await this.#run(() => hash(password, ARGON2)));
  }

  /**
   * Whether `password` matches the encrypted hash. Without a hash (unknown email, an account with no
   * password) an encrypted dummy hash is opened and verified instead: every "no" does the same work
   * (one decryption, one Argon2 verification) as a wrong password. A 503 when too many are already
   * waiting.
   */
  async verify(sealedHash: string | null, password: string): Promise<boolean> {
    const dummy = await this.#dummyHash();
    const opened = this.#open(sealedHash ?? dummy.encrypted);
    const real = sealedHash !== null && opened !== undefined;
    const phc = real ? opened : dummy.phc;
    const matches = await this.#run(() => verify(phc, password).catch(() => false));
    return real && matches;
  }

  /** Computes the dummy hash now rather than at the first unknown email (whose answer would be slower). */
  async warmUp(): Promise<void> {
    await this.#dummyHash();
  }

  async #run<T>(task: () => Promise<T>): Promise<T> {
    try {
      return await this.slots.run(task);
    } catch (error) {
      if (!(error instanceof SemaphoreFull)) throw error;
      throw new ApiError('overloaded', 'too many sign-ins are being checked right now', {
        headers: { 'Retry-After': '1' },
      });
    }
  }

  #open(sealedHash: string): string | undefined {
    try {
      return this.box.decrypt(sealedHash);
    } catch {
      return undefined;
    }
  }

  #dummyHash(): Promise<{ encrypted: string; phc: string }> {
    this.#dummy ??= this.#run(() => hash(randomBytes(32).toString('base64url'), ARGON2)).then(
      (phc) => ({ phc, encrypted: this.box.encrypt(phc) }),
      (error: unknown) => {
        this.#dummy = undefined;
        throw error;
      },
    );
    return this.#dummy;
  }
}
