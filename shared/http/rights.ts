import { ApiError } from '../errors.ts';
import type { ServedRequest } from './request.ts';

/** How often the answers under way check that their caller still has its rights. */
export const RIGHTS_CHECK_MS = 500;

/**
 * Ends answers under way whose caller lost its rights: a token revoked or expired, its studio
 * paused or removed, a console session signed out. A stream (a log follow, a generation) can last
 * far longer than the moment its credential was checked; every `RIGHTS_CHECK_MS` each answer
 * still open runs the same check its request passed (`recheck`, which throws the 401/403 a new
 * request would get), and one that fails has its request's signal aborted with that error as the
 * reason. Whatever writes the answer ends it with a last event carrying it (`rightsLost`).
 */
export class RightsWatch {
  /** Each answer under way: its request's abort controller → its request. */
  readonly #held = new Map<AbortController, ServedRequest>();
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly recheck: (req: ServedRequest) => void,
    private readonly everyMs = RIGHTS_CHECK_MS,
  ) {}

  /** Watches the answer to `req` until the returned function is called (when it closes). */
  hold(req: ServedRequest, controller: AbortController): () => void {
    this.#held.set(controller, req);
    // One timer for the life of the process (it keeps nothing alive), rather than one per busy spell.
    this.#timer ??= setInterval(() => this.#check(), this.everyMs).unref();
    return () => this.#held.delete(controller);
  }

  #check(): void {
    for (const [controller, req] of this.#held) {
      try {
        this.recheck(req);
      } catch (error) {
        // A check that cannot be made now (read models stalled: 503) is no reason to end an answer.
        if (!(error instanceof ApiError) || error.status >= 500) continue;
        this.#held.delete(controller);
        controller.abort(error);
      }
    }
  }
}

/** The error a request's signal was aborted with because its caller lost its rights, if it was. */
export function rightsLost(signal: AbortSignal): ApiError | undefined {
  return signal.aborted && signal.reason instanceof ApiError ? signal.reason : undefined;
}

/** Whether the client went away (not: its rights were taken while it was there). */
export const clientGone = (signal: AbortSignal): boolean => signal.aborted && !rightsLost(signal);
