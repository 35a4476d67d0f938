import type { JobEvent, JobReservation, JobResult, JobStatus } from '../services/ai/jobs/job.ts';
import { JOB_EVENT_TYPES } from '../services/ai/jobs/job.ts';
import { defineProjection } from '../shared/projections/projection.ts';
import { entriesOf, mapOf } from '../shared/projections/snapshot.ts';

export interface JobRecord {
  id: string;
  studio_id: string;
  token_id: string | null;
  model: string;
  modality: 'video';
  status: JobStatus;
  progress: number;
  request: Record<string, unknown>;
  upstream_id: string | null;
  result: JobResult | null;
  error: string | null;
  /** What a hard budget set aside for the job, or null. */
  reservation: JobReservation | null;
  created_at: string;
  updated_at: string;
}

export type JobsState = Map<string, JobRecord>;

export const jobsProjection = defineProjection<JobsState, JobEvent>({
  name: 'jobs',
  schemaVersion: 3,
  handles: JOB_EVENT_TYPES,
  initialState: () => new Map(),
  toSnapshot: entriesOf,
  fromSnapshot: (snapshot) => mapOf(snapshot, 'jobs'),
  apply(state, event) {
    const { jobId } = event.data;
    if (event.type === 'JobQueued') {
      const d = event.data;
      state.set(jobId, {
        id: jobId,
        studio_id: d.studioId,
        token_id: d.tokenId,
        model: d.model,
        modality: d.modality,
        status: 'queued',
        progress: 0,
        request: d.request,
        reservation: d.reservation ?? null,
        upstream_id: null,
        result: null,
        error: null,
        created_at: event.createdAt,
        updated_at: event.createdAt,
      });
      return;
    }
    const job = state.get(jobId);
    if (!job) return;
    job.updated_at = event.createdAt;
    switch (event.type) {
      case 'JobStarted':
        Object.assign(job, { status: 'running', upstream_id: event.data.upstreamId });
        return;
      case 'JobProgressed':
        job.progress = event.data.progress;
        return;
      case 'JobCompleted':
        Object.assign(job, { status: 'completed', progress: 100, result: event.data.result });
        return;
      case 'JobFailed':
        Object.assign(job, { status: 'failed', error: event.data.message });
        return;
      default: {
        const unknown: never = event;
        throw new Error(`unhandled ${JSON.stringify(unknown)}`);
      }
    }
  },
});
