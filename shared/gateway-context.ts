import type { SecretBox } from './crypto.ts';
import type { EventStore } from './event-store/types.ts';
import type { KeyVault } from './key-vault/types.ts';
import type { Leadership, SingletonTask } from './leadership.ts';
import type { Logger } from './logger.ts';
import type { MetricsRegistry } from './observability/metrics.ts';
import type { CheckpointStore } from './projections/checkpoints.ts';
import type { ProjectionRunner } from './projections/runner.ts';
import type { CounterStore } from './rate-limit/counters.ts';

/** What the gateway's services share: the log, the read models kept in memory, the secret box. */
export interface GatewayContext {
  events: EventStore;
  checkpoints: CheckpointStore;
  projections: ProjectionRunner;
  secrets: SecretBox;
  /** Rate-limit counters: in PostgreSQL when the log is there (shared by every gateway), else memory. */
  counters: CounterStore;
  /** Keys kept beside the log so they can be destroyed (a studio's payload keys). */
  keys: KeyVault;
  logger: Logger;
  /** This gateway's metrics registry (GET /metrics); services add their own metrics to it. */
  metrics: MetricsRegistry;
  /** Environment of the process, for env variables not set in the store. */
  processEnv: NodeJS.ProcessEnv;
  /** Runs work that must happen in one process only (alone, or as the leader among processes). */
  singleton(name: string, task: SingletonTask): Leadership;
}
