import { ApiError } from '../errors.ts';
import type { StudioRequest, StudioResponse } from './request.ts';

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
  readonly #held = new Map<StudioResponse, { req: StudioRequest; controller: AbortController }>();
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly recheck: (req: StudioRequest) => void,
    private readonly everyMs = RIGHTS_CHECK_MS,
  ) {}

  /** Watches the answer to `req` until it closes; `controller` is its request's. */
  hold(req: StudioRequest, res: StudioResponse, controller: AbortController): void {
    this.#held.set(res, { req, controller });
    res.once('close', () => {
      this.#held.delete(res);
      if (this.#held.size === 0 && this.#timer) {
        clearInterval(this.#timer);
        this.#timer = undefined;
      }
    });
    this.#timer ??= setInterval(() => this.#check(), this.everyMs).unref();
  }

  #check(): void {
    for (const [res, { req, controller }] of this.#held) {
      try {
        this.recheck(req);
      } catch (error) {
        // A check that cannot be made now (read models stalled: 503) is no reason to end an answer.
        if (!(error instanceof ApiError) || error.status >= 500) continue;
        this.#held.delete(res);
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
