import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { LabelChildren } from './bounded-label.ts';

/** Seconds: from a cache hit or a small read (1 ms) to a long generation (a minute). */
export const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Seconds an append takes: embedded stores answer in well under a millisecond. */
const APPEND_BUCKETS = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
/** Items one group commit carries. */
const GROUP_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000];

/**
 * The metrics of one server (the gateway or the runtime), in a registry of its own: never
 * prom-client's global one, so two servers in one process (or in one test file) do not mix. The
 * generic ones are here; a service adds its own to `registry` (the `ai` service's: services/ai/ai-metrics.ts).
 * Every metric and its labels: docs/operations.md.
 */
export class MetricsRegistry {
  readonly registry = new Registry();
  readonly #requests = new Counter({
    name: 'studio_http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status code',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  readonly #duration = new Histogram({
    name: 'studio_http_request_duration_seconds',
    help: 'Time from a request arriving to its response ending (streams: their last byte)',
    labelNames: ['route', 'method'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly #appendDuration = new Histogram({
    name: 'studio_event_store_append_duration_seconds',
    help: 'Time one append to the event store takes',
    buckets: APPEND_BUCKETS,
    registers: [this.registry],
  });
  readonly #appendFailures = new Counter({
    name: 'studio_event_store_append_failures_total',
    help: 'Appends the event store refused or failed (conflicts included)',
    registers: [this.registry],
  });
  readonly #groupSize = new Histogram({
    name: 'studio_group_commit_size',
    help: 'Items one group commit carries in one append, by what it commits',
    labelNames: ['commit'] as const,
    buckets: GROUP_BUCKETS,
    registers: [this.registry],
  });
  readonly #sse = new Gauge({
    name: 'studio_sse_open_streams',
    help: 'Server-sent event streams open now, by what they carry',
    labelNames: ['stream'] as const,
    registers: [this.registry],
  });
  readonly #requestChildren = new LabelChildren((...v: string[]) => this.#requests.labels(...v));
  readonly #durationChildren = new LabelChildren((...v: string[]) => this.#duration.labels(...v));
  readonly #groupChildren = new LabelChildren((commit: string) => this.#groupSize.labels(commit));
  readonly #sseChildren = new LabelChildren((stream: string) => this.#sse.labels(stream));

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'studio_' });
  }

  /** One response ended: `route` is the pattern served (never the raw URL). */
  request(route: string, method: string, status: number, seconds: number): void {
    this.#requestChildren.get(route, method, String(status)).inc();
    this.#durationChildren.get(route, method).observe(seconds);
  }

  append(seconds: number, failed: boolean): void {
    this.#appendDuration.observe(seconds);
    if (failed) this.#appendFailures.inc();
  }

  groupCommitted(commit: string, size: number): void {
    this.#groupChildren.get(commit).observe(size);
  }

  /** An SSE stream opened; the returned function closes it (once). */
  sseOpened(stream: string): () => void {
    const gauge = this.#sseChildren.get(stream);
    gauge.inc();
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      gauge.dec();
    };
  }

  /**
   * A gauge read at each scrape (`read` may be async: a lag counted against the log's head), with
   * one value per label value it answers.
   */
  sampled(
    name: string,
    help: string,
    label: string,
    read: () => Promise<Iterable<[string, number]>> | Iterable<[string, number]>,
  ): void {
    new Gauge({
      name,
      help,
      labelNames: [label],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const [value, sample] of await read()) this.set({ [label]: value }, sample);
      },
    });
  }

  /** The text a scrape gets, and its content type. */
  async scrape(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}
