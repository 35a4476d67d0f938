import type {
  AppendOptions,
  EventStore,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  StoredEvent,
  SubscribeOptions,
} from '../../shared/event-store/types.ts';

type Tamper = (log: StoredEvent[]) => StoredEvent[];

/**
 * A store whose reads show its log as someone with write access to the database would leave it:
 * events edited, deleted or inserted behind the store's back. Appends and subscriptions go to the
 * real store (the sealer), reads (what `verifyLog` does) see the tampered log.
 */
export class TamperedLog implements EventStore {
  readonly kind;
  #tampers: Tamper[] = [];

  constructor(private readonly inner: EventStore) {
    this.kind = inner.kind;
  }

  edit(position: number, change: (event: StoredEvent) => StoredEvent): this {
    this.#tampers.push((log) => log.map((e) => (e.position === position ? change(e) : e)));
    return this;
  }

  remove(position: number): this {
    this.#tampers.push((log) => log.filter((e) => e.position !== position));
    return this;
  }

  insert(event: StoredEvent): this {
    this.#tampers.push((log) => [...log, event].sort((a, b) => a.position - b.position));
    return this;
  }

  async #log(): Promise<StoredEvent[]> {
    return this.#tampers.reduce((log, tamper) => tamper(log), await this.inner.readAll());
  }

  async readAll(options: ReadAllOptions = {}): Promise<StoredEvent[]> {
    const selected = (await this.#log()).filter(
      (e) =>
        e.position > (options.after ?? 0) &&
        (options.streamId === undefined || e.streamId === options.streamId) &&
        (options.types === undefined || options.types.includes(e.type)),
    );
    return selected.slice(0, options.limit ?? selected.length);
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<StoredEvent[]> {
    const selected = (await this.#log())
      .filter((e) => e.streamId === streamId && e.revision > (options.after ?? -1))
      .sort((a, b) => a.revision - b.revision);
    return selected.slice(0, options.limit ?? selected.length);
  }

  append(streamId: string, events: readonly NewEvent[], options: AppendOptions) {
    return this.inner.append(streamId, events, options);
  }

  subscribePages(options: SubscribeOptions) {
    return this.inner.subscribePages(options);
  }

  headPosition() {
    return this.inner.headPosition();
  }

  close() {
    return this.inner.close();
  }
}
