import { randomBytes } from 'node:crypto';
import { SecretBox } from '../../../shared/crypto.ts';
import type { KeyVault } from '../../../shared/key-vault/types.ts';

/**
 * How long today's key is kept in memory for sealing: a gateway that has not seen another's erasure
 * may seal with the destroyed key for this long (those payloads are unreadable, as if erased too).
 * Reads always ask the vault, so an erasure holds for them at once on every gateway.
 */
const OPENED_FOR_MS = 60_000;

/**
 * A studio's payload keys: one per UTC day (`payload.<studio>.<YYYY-MM-DD>`), made on first use,
 * kept in the key vault encrypted with the master key. Destroying a day's key is what makes that
 * day's payloads unreadable: retention and erasure are both that.
 */
export class StudioKeys {
  readonly #opened = new Map<string, { box: SecretBox; until: number }>();

  constructor(
    private readonly vault: KeyVault,
    private readonly master: SecretBox,
    private readonly now: () => number = Date.now,
  ) {}

  static prefixOf = (studioId: string) => `payload.${studioId}.`;
  static dayOf = (keyId: string) => keyId.slice(keyId.lastIndexOf('.') + 1);

  /** Today's key of the studio (made if there is none yet). */
  async current(studioId: string): Promise<{ keyId: string; box: SecretBox }> {
    const keyId = `${StudioKeys.prefixOf(studioId)}${new Date(this.now()).toISOString().slice(0, 10)}`;
    const cached = this.#cached(keyId);
    if (cached) return { keyId, box: cached };
    const kept = await this.vault.putIfAbsent(keyId, this.master.encrypt(randomBytes(32).toString('base64')));
    return { keyId, box: this.#keep(keyId, kept) };
  }

  /** The key `keyId`, or undefined once it was destroyed (by this gateway or another). */
  async open(keyId: string): Promise<SecretBox | undefined> {
    const kept = await this.vault.get(keyId);
    if (kept === undefined) {
      this.#opened.delete(keyId);
      return undefined;
    }
    return this.#unseal(kept);
  }

  /** Destroys the studio's keys of days before `beforeDay` (all of them without one); answers their ids. */
  async destroy(studioId: string, beforeDay?: string): Promise<string[]> {
    const ids = (await this.vault.list(StudioKeys.prefixOf(studioId))).filter(
      (id) => beforeDay === undefined || StudioKeys.dayOf(id) < beforeDay,
    );
    for (const id of ids) this.#opened.delete(id);
    await this.vault.destroy(ids);
    return ids;
  }

  #cached(keyId: string): SecretBox | undefined {
    const opened = this.#opened.get(keyId);
    if (opened && opened.until > this.now()) return opened.box;
    this.#opened.delete(keyId);
    return undefined;
  }

  #keep(keyId: string, sealed: string): SecretBox {
    const box = this.#unseal(sealed);
    this.#opened.set(keyId, { box, until: this.now() + OPENED_FOR_MS });
    return box;
  }

  /** A key as the vault keeps it (encrypted with the master key), ready to use. */
  #unseal(sealed: string): SecretBox {
    return new SecretBox(Buffer.from(this.master.decrypt(sealed), 'base64'));
  }
}
