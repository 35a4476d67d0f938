import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer } from 'node:net';
import { ApiError } from '../errors.ts';
import { IdleWaiters } from '../idle-waiters.ts';

/** What a refused client is told to wait before it tries again (elsewhere: this process is going). */
export const DRAIN_RETRY_AFTER_S = 1;

/** Paths still answered while draining: the probes, so that a supervisor sees why. */
const PROBES = new Set(['/health', '/ready']);

const drainOf = new WeakMap<IncomingMessage, Drain>();

/**
 * A process being stopped without cutting anyone off. Until `begin`, it only counts the requests in
 * flight; from then on a new request is refused (503 `unavailable`, `Connection: close`,
 * `Retry-After`) except the probes, answers close their connection, long-lived streams are told to
 * go elsewhere, and `settled` says when the last request has ended. A request is in flight from its
 * first byte until its answer is closed and its handler has returned (a handler cut off by its
 * client still records what it did).
 */
export class Drain {
  #announced = false;
  #draining = false;
  /** Each request in flight: whether its answer has closed, and how many hold it open besides. */
  readonly #requests = new Map<IncomingMessage, { res: ServerResponse; closed: boolean; holds: number }>();
  readonly #goingAway = new Set<() => void>();
  readonly #idle = new IdleWaiters(() => this.#requests.size === 0);

  /** Whether /ready should say `draining`: once announced, or begun. */
  get draining(): boolean {
    return this.#announced || this.#draining;
  }

  /** Requests whose answer is not closed yet, or whose handler is still running. */
  get inFlight(): number {
    return this.#requests.size;
  }

  /**
   * The front door's step (after request ids): counts the request at `path`, or throws the 503 that
   * refuses it once draining.
   */
  admit(req: IncomingMessage, res: ServerResponse, path: string): void {
    if (this.#draining) {
      res.setHeader('Connection', 'close');
      if (!PROBES.has(path)) throw refusal();
    }
    const entry = { res, closed: false, holds: 0 };
    this.#requests.set(req, entry);
    drainOf.set(req, this);
    res.once('close', () => {
      entry.closed = true;
      this.#release(req, entry);
    });
  }

  /**
   * Keeps the request counted until the returned function is called, beyond its answer's close:
   * `serve` holds it while the handler runs, so work done after a client left is waited for too.
   */
  static hold(req: IncomingMessage): () => void {
    const drain = drainOf.get(req);
    const entry = drain ? drain.#requests.get(req) : undefined;
    if (!drain || !entry) return () => {};
    entry.holds++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      entry.holds--;
      drain.#release(req, entry);
    };
  }

  #release(req: IncomingMessage, entry: { closed: boolean; holds: number }): void {
    if (!entry.closed || entry.holds > 0) return;
    this.#requests.delete(req);
    this.#idle.check();
  }

  /**
   * An answer that never ends on its own (an event stream) registers how to end it: `goAway` is
   * called when the drain begins (at once if it has). Returns the function that unregisters it.
   */
  onBegin(goAway: () => void): () => void {
    if (this.#draining) {
      goAway();
      return () => {};
    }
    this.#goingAway.add(goAway);
    return () => this.#goingAway.delete(goAway);
  }

  /**
   * Says so on /ready but goes on serving: in one process, the runtime drains first and its turns
   * still call this gateway.
   */
  announce(): void {
    this.#announced = true;
  }

  /** Refuses new requests from now on, and tells long-lived streams to go. Idempotent. */
  begin(): void {
    if (this.#draining) return;
    this.#draining = true;
    for (const { res } of this.#requests.values()) if (!res.headersSent) res.setHeader('Connection', 'close');
    for (const goAway of [...this.#goingAway]) goAway();
    this.#goingAway.clear();
  }

  /** Resolves true once nothing is in flight, false if `deadline` aborts first. */
  settled(deadline: AbortSignal): Promise<boolean> {
    return this.#idle.wait(deadline);
  }
}

function refusal(): ApiError {
  return new ApiError('unavailable', 'this server is shutting down; send the request to another one', {
    headers: { 'Retry-After': String(DRAIN_RETRY_AFTER_S) },
  });
}

/** What a drain came to: the exit code of a stopping process follows `durable`. */
export interface DrainOutcome {
  /** Every request (and turn) in flight ended on its own before the deadline: nothing was cut. */
  finished: boolean;
  /** Everything that had to be written (usage events, ends of turns) was. */
  durable: boolean;
}

/** How long handlers cut off at the deadline get to record what they did. */
const CUT_GRACE_MS = 2_000;

export interface DrainSteps {
  /** Work in flight besides requests (a session's running turn): whether it ended by the deadline. */
  settled?: (deadline: AbortSignal) => Promise<boolean>;
  /** Ends that work at once (the deadline passed). */
  cut?: () => void;
  /** Closes the rest once the work ended or was cut: whether all that had to be written was. */
  stop: () => Promise<{ durable: boolean }>;
}

/**
 * Stops a server without cutting anyone off: no new connections (the listener closes), a new
 * request on a kept-alive connection refused with `Connection: close`, connections closed as their
 * last answer ends. At `deadline` what is left is cut, and its handlers get a moment to record it.
 */
export async function finishDraining(
  server: Server,
  drain: Drain,
  deadline: AbortSignal,
  steps: DrainSteps,
): Promise<DrainOutcome> {
  drain.begin();
  // net's close, not http's: http's also drops idle kept-alive connections at once, and a client
  // sending its next request just then gets a reset; here it gets a 503 that says why.
  if (server.listening) NetServer.prototype.close.call(server);
  const [requests, other] = await Promise.all([
    drain.settled(deadline),
    steps.settled?.(deadline) ?? Promise.resolve(true),
  ]);
  const finished = requests && other;
  if (!finished) {
    steps.cut?.();
    server.closeAllConnections();
    await drain.settled(AbortSignal.timeout(CUT_GRACE_MS));
  }
  server.closeAllConnections();
  const { durable } = await steps.stop();
  return { finished, durable };
}
