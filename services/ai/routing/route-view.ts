import type { RetryCondition, Strategy } from './routes.ts';

/** A route as admins see it (`routes/list`, `routes/upsert`): its settings, and each target's catalog state and health. */
export interface RouteView {
  id: string;
  strategy: Strategy;
  targets: {
    model: string;
    weight: number;
    /** In the catalog now, with its provider's keys set. */
    callable: boolean;
    state: 'healthy' | 'cooling';
    recent_failures: number;
    cooling_until: string | null;
  }[];
  retry_on: RetryCondition[];
  max_attempts: number | null;
  timeout_ms: number | null;
  cooldown: { failures: number; window_s: number; cooldown_s: number };
  /** What every callable target serves, of text, stream and chat (`Modality` names). */
  modalities: string[];
  available: boolean;
  updated_at: string;
}
