/** What a label value becomes once its label holds as many values as it may. */
export const OTHER = 'other';

/**
 * Keeps one label's values few, whatever callers send: the first `limit` distinct values are kept
 * as they are, every later one is counted as `other`. Prometheus keeps a series per value, so a
 * label fed from data (studio ids, model ids, route ids) is capped here rather than trusted.
 */
export class BoundedLabel {
  readonly #kept = new Set<string>();

  constructor(readonly limit: number) {}

  of(value: string): string {
    if (this.#kept.has(value)) return value;
    if (this.#kept.size >= this.limit) return OTHER;
    this.#kept.add(value);
    return value;
  }
}

/**
 * The children of one labelled metric, resolved once per distinct label values: `labels()` hashes
 * its arguments on every call, a Map lookup of the joined values is cheaper on the hot path.
 */
export class LabelChildren<Child> {
  readonly #children = new Map<string, Child>();

  constructor(private readonly resolve: (...values: string[]) => Child) {}

  get(...values: string[]): Child {
    const key = values.join('\u0000');
    let child = this.#children.get(key);
    if (child === undefined) {
      child = this.resolve(...values);
      this.#children.set(key, child);
    }
    return child;
  }
}
