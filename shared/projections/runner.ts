import { ApiError } from '../errors.ts';
import { resubscribingPages } from '../event-store/resubscribe.ts';
import type { EventStore, StoredEvent } from '../event-store/types.ts';
import { isCaughtUp } from '../event-store/types.ts';
import type { Logger } from '../logger.ts';
import type { BackoffOptions } from '../retry.ts';
import { stringifyInTurns } from '../stringify-in-turns.ts';
import { type CheckpointStore, SerializedSnapshot } from './checkpoints.ts';
import { ReadModelLiveness } from './liveness.ts';
import type { AnyProjection, Projection } from './projection.ts';

interface Slot {
  projection: AnyProjection;
  state: unknown;
  position: number;
  /** When its snapshot was last saved by this runner (ms since the epoch; 0: not yet). */
  savedAt: number;
  /** Events it was given since its snapshot was last saved (or loaded). */
  sinceSaved: number;
}

export interface ProjectionStatus {
  name: string;
  schemaVersion: number;
  position: number;
}

const SNAPSHOT_EVERY_EVENTS = 5_000;
const SNAPSHOT_DELAY_MS = 5_000;
/**
 * A read model saved on its own schedule (`snapshotEveryMs`) is saved sooner once this many events
 * came after its snapshot: a restart after a crash replays at most about this many for it.
 */
const MOST_EVENTS_UNSAVED = 50_000;

export interface ProjectionRunnerOptions {
  /** Backoff between a failed read of the log and the next try. Default 100 ms doubling to 5 s. */
  retry?: BackoffOptions;
  /** How long reads may fail before the read models count as stale. Default 5 s. */
  staleAfterMs?: number;
}

/**
 * Keeps in-memory read models current: loads each one's snapshot, follows the log with one
 * subscription, and snapshots again as it goes, so a restart replays only what is new.
 */
export class ProjectionRunner {
  #slots: Slot[];
  #controller = new AbortController();
  #waiters: { position: number; resolve: () => void }[] = [];
  #position = 0;
  #sinceSnapshot = 0;
  #live = false;
  #snapshotTimer: NodeJS.Timeout | undefined;
  #loop: Promise<void> | undefined;
  readonly #retry: BackoffOptions | undefined;
  /** The stream categories to read, when every read model here names its own. */
  #categories: string[] | undefined;
  /** Whether the read models follow the log, or have been failing to read it (and since when). */
  readonly liveness: ReadModelLiveness;

  constructor(
    private readonly store: EventStore,
    private readonly checkpoints: CheckpointStore,
    projections: readonly AnyProjection[],
    private readonly logger?: Logger,
    options: ProjectionRunnerOptions = {},
  ) {
    this.#retry = options.retry;
    this.liveness = new ReadModelLiveness(options.staleAfterMs);
    this.#slots = projections.map((projection) => ({
      projection,
      state: projection.initialState(),
      position: 0,
      savedAt: 0,
      sinceSaved: 0,
    }));
    const categories = projections.map((p) => p.categories);
    if (categories.length > 0 && categories.every((c) => c !== undefined))
      this.#categories = [...new Set(categories.flat())];
  }

  /** The current state of a read model this runner keeps. */
  // biome-ignore lint/suspicious/noExplicitAny: only the state type matters here.
  state<State>(projection: Projection<State, any>): State {
    const slot = this.#slots.find((s) => s.projection.name === projection.name);
    if (!slot) throw new Error(`projection ${projection.name} is not run here`);
    return slot.state as State;
  }

  /** Resolves once every projection has caught up with the log as it was when called. */
  async start(): Promise<void> {
    for (const slot of this.#slots) {
      const checkpoint = await this.checkpoints.load(slot.projection.name);
      if (
        checkpoint &&
        checkpoint.schemaVersion === slot.projection.schemaVersion &&
        checkpoint.state !== undefined
      ) {
        try {
          slot.state = slot.projection.fromSnapshot(checkpoint.state);
          slot.position = checkpoint.position;
        } catch (error) {
          this.logger?.warn(
            { err: error, projection: slot.projection.name },
            'unreadable projection snapshot; rebuilding it from the log',
          );
        }
      }
    }
    this.#position = Math.min(...this.#slots.map((s) => s.position), Number.MAX_SAFE_INTEGER);
    if (this.#slots.length === 0) this.#position = 0;

    let caughtUp!: () => void;
    let failed!: (error: unknown) => void;
    const ready = new Promise<void>((resolve, reject) => {
      caughtUp = resolve;
      failed = reject;
    });
    this.#loop = this.#follow(caughtUp).catch((error) => {
      // Only a projection that throws gets here (failed reads are retried). The read models stop
      // following the log for good: say so, so that what depends on them fails closed.
      this.liveness.failed(error);
      this.logger?.error({ err: error }, 'projection runner stopped');
      failed(error);
    });
    await ready;
  }

  /** Follows the log for good: a failed read is retried (with backoff) from the last applied event. */
  async #follow(caughtUp: () => void): Promise<void> {
    const subscription = resubscribingPages(this.store, {
      after: this.#position,
      signal: this.#controller.signal,
      batchSize: 5000,
      ...(this.#categories ? { categories: this.#categories } : {}),
      retry: this.#retry,
      onFailure: ({ error, failures, retryInMs, after }) => {
        const outage = this.liveness.failed(error);
        const fields = { err: error, failed_reads: failures, position: after, retry_in_ms: retryInMs };
        // One warning per outage (and one per minute while it lasts), not one per attempt.
        if (outage.warn) this.logger?.warn(fields, 'projection runner cannot read the log; retrying');
        else this.logger?.debug(fields, 'projection runner cannot read the log; retrying');
      },
    });
    for await (const page of subscription) {
      if (isCaughtUp(page)) {
        // Read through there: what it skipped (other categories) is behind every read model too.
        if (page.position > this.#position) this.#passTo(page.position);
        const outage = this.liveness.caughtUp();
        if (outage) {
          this.logger?.info(
            { position: page.position, stalled_since: outage.since, failed_reads: outage.failures },
            'projection runner caught up again',
          );
        }
        // Each time a runner of some categories catches up it says so; one snapshot is enough.
        if (!this.#live || outage) this.#scheduleSnapshot(0);
        this.#live = true;
        caughtUp();
        continue;
      }
      this.liveness.readSucceeded();
      for (const event of page.events) this.#apply(event);
    }
  }

  #apply(event: StoredEvent): void {
    for (const slot of this.#slots) {
      if (event.position <= slot.position) continue;
      if (slot.projection.handles.includes(event.type)) slot.projection.apply(slot.state, event);
      slot.position = event.position;
      slot.sinceSaved++;
    }
    this.#position = event.position;
    if (this.#waiters.length > 0) this.#wake();
    // While catching up, one snapshot at the end is enough: each one serializes every read model.
    if (!this.#live) return;
    if (++this.#sinceSnapshot >= SNAPSHOT_EVERY_EVENTS) void this.snapshot();
    else this.#scheduleSnapshot(SNAPSHOT_DELAY_MS);
  }

  #passTo(position: number): void {
    for (const slot of this.#slots) slot.position = Math.max(slot.position, position);
    this.#position = position;
    if (this.#waiters.length > 0) this.#wake();
    if (this.#live) this.#scheduleSnapshot(SNAPSHOT_DELAY_MS);
  }

  #wake(): void {
    const ready = this.#waiters.filter((w) => w.position <= this.#position);
    this.#waiters = this.#waiters.filter((w) => w.position > this.#position);
    for (const waiter of ready) waiter.resolve();
  }

  /** Waits (bounded) until every read model here reflects the event at `position`. */
  waitFor(position: number, timeoutMs = 2_000): Promise<boolean> {
    if (position <= this.#position) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      const waiter = {
        position,
        resolve: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      this.#waiters.push(waiter);
    });
  }

  /**
   * Read-your-writes for a command: waits (bounded) until the read models show `position`, else
   * 503 `unavailable` (the command is stored; only this process's view of it is late).
   */
  async awaitReadModels(position: number, timeoutMs = 2_000): Promise<void> {
    if (await this.waitFor(position, timeoutMs)) return;
    const report = this.liveness.report();
    throw new ApiError(
      'unavailable',
      report.state === 'live'
        ? `the change was stored (position ${position}) but this server's read models did not show it within ${timeoutMs} ms; read it again in a moment`
        : `the change was stored (position ${position}) but this server's read models cannot follow the log right now (${report.state}); read it again in a moment`,
      { headers: { 'Retry-After': '1' } },
    );
  }

  get position(): number {
    return this.#position;
  }

  status(): ProjectionStatus[] {
    return this.#slots.map((s) => ({
      name: s.projection.name,
      schemaVersion: s.projection.schemaVersion,
      position: s.position,
    }));
  }

  #scheduleSnapshot(delayMs: number): void {
    if (this.#snapshotTimer || this.#controller.signal.aborted) return;
    this.#snapshotTimer = setTimeout(() => void this.snapshot(), delayMs);
    this.#snapshotTimer.unref();
  }

  /**
   * Saves each read model with the position it reflects; one that says how often it is saved
   * (`snapshotEveryMs`) only when that time has passed or `MOST_EVENTS_UNSAVED` came since, unless
   * `all`.
   */
  async snapshot({ all = false }: { all?: boolean } = {}): Promise<void> {
    clearTimeout(this.#snapshotTimer);
    this.#snapshotTimer = undefined;
    this.#sinceSnapshot = 0;
    const now = Date.now();
    const due = this.#slots.filter((s) => {
      const every = s.projection.snapshotEveryMs;
      const isDue =
        all || every === undefined || now - s.savedAt >= every || s.sinceSaved >= MOST_EVENTS_UNSAVED;
      if (isDue) {
        s.savedAt = now;
        s.sinceSaved = 0;
        return true;
      }
      return false;
    });
    // Each snapshot is taken now, so it matches the position beside it: `save` serializes before
    // its first await, and a snapshot serialized over several turns holds nothing events change.
    const saves = due.map((s) => {
      const { name, schemaVersion, serializeInTurns } = s.projection;
      const checkpoint = { schemaVersion, position: s.position };
      const state: unknown = s.projection.toSnapshot(s.state);
      if (!serializeInTurns) return this.checkpoints.save(name, { ...checkpoint, state });
      return stringifyInTurns(state).then((parts) =>
        this.checkpoints.save(name, { ...checkpoint, state: new SerializedSnapshot(parts) }),
      );
    });
    try {
      await Promise.all(saves);
    } catch (error) {
      this.logger?.warn(
        { err: error },
        'could not save projection snapshots; they will be rebuilt from the log',
      );
    }
  }

  async stop(): Promise<void> {
    this.#controller.abort();
    await this.#loop;
    clearTimeout(this.#snapshotTimer);
    await this.snapshot({ all: true });
  }
}
