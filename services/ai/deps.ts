import type { GatewayContext } from '../../shared/gateway-context.ts';
import type { AiMetrics } from './ai-metrics.ts';
import type { ResponseCache } from './cache/response-cache.ts';
import type { Catalog } from './catalog.ts';
import type { JobWorker } from './jobs/worker.ts';
import type { PayloadCapture } from './payloads/payload-capture.ts';
import type { PriceBook } from './prices/price-book.ts';
import type { EnvLookup } from './providers/types.ts';
import type { RateLimits } from './rate-limits/rate-limits.ts';
import type { RouteBook } from './routing/route-book.ts';
import type { UpstreamClient } from './upstream.ts';
import type { UsageRecorder } from './usage/recorder.ts';

/** What the `ai` service's actions share. */
export interface AiDeps {
  gw: GatewayContext;
  catalog: Catalog;
  env: EnvLookup;
  /** The shared client every call to an upstream goes through. */
  upstream: UpstreamClient;
  /** What the request log keeps of each studio's requests, and their bodies where it captures them. */
  payloads: PayloadCapture;
  usage: UsageRecorder;
  limits: RateLimits;
  jobs: JobWorker;
  prices: PriceBook;
  cache: ResponseCache;
  routes: RouteBook;
  dataDir: string;
  metrics: AiMetrics;
}
