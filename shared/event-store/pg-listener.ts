import pg from 'pg';
import { backoffDelay } from '../retry.ts';

/** Reconnecting after the listening connection was lost: from 250 ms, doubling up to 10 s. */
const RECONNECT = { initialMs: 250, maxMs: 10_000 };

/**
 * A dedicated connection that LISTENs on a channel and calls `onWake` for each notification, with the
 * process id of the backend that sent it. If the connection drops it reconnects with backoff and
 * wakes once more (no sender), since notifications sent while it was away are lost: subscribers then
 * re-read and find whatever was committed meanwhile.
 */
export class PgListener {
  #client: pg.Client | undefined;
  #closed = false;
  /** Reconnections failed in a row. */
  #failures = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly connectionString: string,
    private readonly channel: string,
    private readonly onWake: (sender?: number) => void,
  ) {}

  async start(): Promise<void> {
    await this.#connect();
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.connectionString });
    client.on('notification', (message) => this.onWake(message.processId));
    client.on('error', () => this.#lost(client));
    client.on('end', () => this.#lost(client));
    await client.connect();
    await client.query(`LISTEN ${this.channel}`);
    this.#client = client;
    this.#failures = 0;
  }

  #lost(client: pg.Client): void {
    if (this.#closed || this.#client !== client) return;
    this.#client = undefined;
    client.end().catch(() => undefined);
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    if (this.#closed || this.#timer) return;
    this.#timer = setTimeout(
      async () => {
        this.#timer = undefined;
        try {
          await this.#connect();
          this.onWake();
        } catch {
          this.#failures++;
          this.#scheduleReconnect();
        }
      },
      backoffDelay(this.#failures + 1, RECONNECT),
    );
    this.#timer.unref();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#client?.end().catch(() => undefined);
  }
}
