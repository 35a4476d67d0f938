import { chatProjection } from '../../projections/chat.ts';
import type { AnyProjection } from '../../projections/projection.ts';
import { sessionsProjection } from '../../projections/sessions.ts';

/** The read models the runtime keeps in memory. */
export const RUNTIME_PROJECTIONS: readonly AnyProjection[] = [sessionsProjection, chatProjection];
