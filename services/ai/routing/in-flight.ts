/** Generations in flight per model, in this process: what a `least_busy` route weighs. */
export class InFlight {
  readonly #counts = new Map<string, number>();

  count(model: string): number {
    return this.#counts.get(model) ?? 0;
  }

  /** Counts one more generation of `model`; the function returned ends it (once, however often called). */
  add(model: string): () => void {
    this.#counts.set(model, this.count(model) + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const left = this.count(model) - 1;
      if (left > 0) this.#counts.set(model, left);
      else this.#counts.delete(model);
    };
  }
}
