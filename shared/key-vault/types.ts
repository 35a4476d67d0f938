/**
 * Keys kept outside the append-only log, so that they can be destroyed: what a key sealed becomes
 * unreadable for good while the log, its digests and its seals stay whole. Values are opaque to the
 * vault (callers store them already encrypted with the master key).
 */
export interface KeyVault {
  readonly kind: 'memory' | 'file' | 'postgres';
  /** Stores `value` under `id` unless a value is there already; answers the value kept. */
  putIfAbsent(id: string, value: string): Promise<string>;
  get(id: string): Promise<string | undefined>;
  /** The ids that start with `prefix`. */
  list(prefix: string): Promise<string[]>;
  /** Destroys these keys; answers how many there were. */
  destroy(ids: readonly string[]): Promise<number>;
  close(): Promise<void>;
}

/** Ids are made of letters, digits, `_`, `-`, `.` and `:` (they become file names). */
export const KEY_ID = /^[A-Za-z0-9_.:-]{1,200}$/;

export function checkKeyId(id: string): string {
  if (!KEY_ID.test(id) || id.includes('..')) throw new Error(`not a key id: ${JSON.stringify(id)}`);
  return id;
}
