import { chatProjection } from '../../projections/chat.ts';
import { sessionsProjection } from '../../projections/sessions.ts';
import type { AnyProjection } from '../../shared/projections/projection.ts';

/** The read models the runtime keeps in memory. */
export const RUNTIME_PROJECTIONS: readonly AnyProjection[] = [sessionsProjection, chatProjection];
