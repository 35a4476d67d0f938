/**
 * Maps in snapshots: a map is stored as its list of `[key, value]` entries, so no id ever becomes a
 * key of a JSON object (where `__proto__` would be special again once parsed and copied).
 */
export type Entries<V> = [string, V][];

export const entriesOf = <V>(map: ReadonlyMap<string, V>): Entries<V> => [...map];

/** A map from entries a snapshot holds; refuses anything else (the runner then rebuilds from the log). */
export function mapOf<V>(entries: unknown, what: string): Map<string, V> {
  if (!Array.isArray(entries) || !entries.every((e) => Array.isArray(e) && typeof e[0] === 'string')) {
    throw new Error(`the snapshot of ${what} is not a list of [id, value] entries`);
  }
  return new Map(entries as Entries<V>);
}
