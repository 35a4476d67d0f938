import { END, type Filter } from '@kurrent/kurrentdb-client';
import { backoffDelay } from '../../retry.ts';
import type { ChangeNotifier } from '../change-notifier.ts';
import type { KurrentClient, LiveSubscription } from './client.ts';

const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;

/**
 * One live, filtered `subscribeToAll` from the end of the log that wakes the store's readers:
 * appends by other processes wake them as the server delivers them. After the subscription drops,
 * it reconnects (with backoff) and wakes every reader once, so nothing appended meanwhile waits for
 * the next event.
 */
export class LiveWakeup {
  #starting: Promise<void> | undefined;
  #live: LiveSubscription | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(
    private readonly client: KurrentClient,
    private readonly filter: Filter,
    private readonly changes: ChangeNotifier,
    private readonly confirmTimeoutMs: number,
  ) {}

  /** Opens the subscription; resolves once the server confirmed it (a failed start may be retried). */
  start(): Promise<void> {
    this.#starting ??= this.#subscribe().catch((error: unknown) => {
      this.#starting = undefined;
      throw error;
    });
    return this.#starting;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    const live = this.#live;
    this.#live = undefined;
    await live?.unsubscribe().catch(() => undefined);
  }

  #subscribe(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const subscription = this.client.subscribeToAll({ fromPosition: END, filter: this.filter });
      this.#live = subscription;
      let confirmed = false;
      let ended = false;
      const timer = setTimeout(
        () => end(new Error(`KurrentDB did not confirm the subscription within ${this.confirmTimeoutMs} ms`)),
        this.confirmTimeoutMs,
      );
      const confirm = () => {
        if (confirmed || ended) return;
        confirmed = true;
        clearTimeout(timer);
        resolve();
      };
      const end = (error: unknown) => {
        if (ended) return;
        ended = true;
        clearTimeout(timer);
        if (this.#live === subscription) this.#live = undefined;
        void subscription.unsubscribe().catch(() => undefined);
        if (!confirmed) reject(error);
        else this.#reconnect(0);
      };
      subscription.on('confirmation', () => {
        confirm();
        this.changes.notify();
      });
      subscription.on('caughtUp', confirm);
      subscription.on('data', () => {
        confirm();
        this.changes.notify();
      });
      subscription.on('error', (error) => end(error));
      subscription.on('end', () => end(new Error('the KurrentDB subscription ended')));
      subscription.on('close', () => end(new Error('the KurrentDB subscription closed')));
    });
  }

  #reconnect(attempt: number): void {
    if (this.#closed) return;
    const delay = backoffDelay(attempt + 1, { initialMs: RECONNECT_MIN_MS, maxMs: RECONNECT_MAX_MS });
    this.#retryTimer = setTimeout(() => {
      if (this.#closed) return;
      this.#subscribe().then(
        // Events appended while no subscription listened: every reader looks once.
        () => this.changes.notify(),
        () => this.#reconnect(attempt + 1),
      );
    }, delay);
  }
}
