import { overloaded } from '../../shared/errors.ts';

export interface FairShareOptions {
  /** Slots in all: the upstream pool's connections. */
  capacity: number;
  /** Most slots one tenant may hold at once, so others always find some free. */
  maxPerTenant: number;
  /** Longest a request waits for a slot before it is refused with a 503. */
  queueTimeoutMs: number;
}

/** Gives a slot back; calling it again does nothing. */
export type Release = () => void;

interface Waiter {
  tenant: string;
  grant(release: Release): void;
}

/**
 * Shares one upstream's connections between tenants (studios). A tenant holds at most
 * `maxPerTenant` slots; a freed slot goes to the waiting tenant that holds the fewest, ties taken
 * in turn (round-robin), so a tenant that fills its share with long streams only queues itself.
 * A request that waits longer than `queueTimeoutMs` is refused (503 `overloaded`, `Retry-After`).
 */
export class FairShare {
  #inUse = 0;
  readonly #held = new Map<string, number>();
  /** Waiting requests by tenant; the map's order is the turn order (a served tenant moves last). */
  readonly #queues = new Map<string, Waiter[]>();

  constructor(readonly options: FairShareOptions) {}

  /** Resolves once `tenant` may send; the caller must release the slot when its exchange is over. */
  acquire(tenant: string, signal: AbortSignal): Promise<Release> {
    signal.throwIfAborted();
    // Nobody waiting and a slot free: served at once, without a queue entry, a timer or a listener
    // (what almost every request meets, so it is worth its own path).
    if (
      this.#queues.size === 0 &&
      this.#inUse < this.options.capacity &&
      this.held(tenant) < this.options.maxPerTenant
    ) {
      this.#inUse++;
      this.#held.set(tenant, this.held(tenant) + 1);
      return Promise.resolve(this.#releaseFor(tenant));
    }
    return new Promise<Release>((resolve, reject) => {
      const leave = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.#remove(waiter);
      };
      const waiter: Waiter = {
        tenant,
        grant: (release) => {
          leave();
          resolve(release);
        },
      };
      const onAbort = () => {
        leave();
        reject(signal.reason);
      };
      const timer = setTimeout(() => {
        leave();
        reject(
          overloaded(
            `the upstream is busy: no connection became free within ${this.options.queueTimeoutMs} ms`,
          ),
        );
      }, this.options.queueTimeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });
      const queue = this.#queues.get(tenant);
      if (queue) queue.push(waiter);
      else this.#queues.set(tenant, [waiter]);
      this.#dispatch();
    });
  }

  /** Slots held by each tenant, for tests and health. */
  held(tenant: string): number {
    return this.#held.get(tenant) ?? 0;
  }

  #dispatch(): void {
    while (this.#inUse < this.options.capacity) {
      const tenant = this.#nextTenant();
      if (tenant === undefined) return;
      const queue = this.#queues.get(tenant)!;
      const waiter = queue[0]!;
      // Served: this tenant's turn comes again after every other waiting tenant's.
      this.#queues.delete(tenant);
      this.#queues.set(tenant, queue);
      this.#inUse++;
      this.#held.set(tenant, this.held(tenant) + 1);
      waiter.grant(this.#releaseFor(tenant));
    }
  }

  /** The waiting tenant below its cap that holds the fewest slots; the first in turn order on a tie. */
  #nextTenant(): string | undefined {
    let best: string | undefined;
    let fewest = this.options.maxPerTenant;
    for (const [tenant, queue] of this.#queues) {
      const held = this.held(tenant);
      if (queue.length > 0 && held < fewest) {
        best = tenant;
        fewest = held;
      }
    }
    return best;
  }

  #releaseFor(tenant: string): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#inUse--;
      const held = this.held(tenant) - 1;
      if (held > 0) this.#held.set(tenant, held);
      else this.#held.delete(tenant);
      this.#dispatch();
    };
  }

  #remove(waiter: Waiter): void {
    const queue = this.#queues.get(waiter.tenant);
    if (!queue) return;
    const at = queue.indexOf(waiter);
    if (at >= 0) queue.splice(at, 1);
    if (queue.length === 0) this.#queues.delete(waiter.tenant);
  }
}
