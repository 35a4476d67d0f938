import { type Decider, unknownCase } from '../../../shared/decider.ts';
import { DomainError } from '../../../shared/errors.ts';
import { scrubCredentials } from '../../../shared/scrub-credentials.ts';

/** A long generation (video) runs as a job: one stream per job, `job-<id>`. */
export const jobStreamId = (jobId: string) => `job-${jobId}`;

export interface JobResult {
  mime_type: string;
  bytes: number;
  sha256: string;
  /** Path of the content under the data dir. */
  file: string;
}

export type JobEvent =
  | {
      type: 'JobQueued';
      data: {
        jobId: string;
        studioId: string;
        tokenId: string | null;
        model: string;
        modality: 'video';
        request: Record<string, unknown>;
        /** What a hard budget set aside for it, settled when the job ends. Absent: no hard budget. */
        reservation?: JobReservation;
      };
    }
  | { type: 'JobStarted'; data: { jobId: string; upstreamId: string } }
  | { type: 'JobProgressed'; data: { jobId: string; progress: number } }
  | { type: 'JobCompleted'; data: { jobId: string; result: JobResult } }
  | { type: 'JobFailed'; data: { jobId: string; message: string } };

export type JobCommand =
  | {
      type: 'QueueJob';
      jobId: string;
      studioId: string;
      tokenId: string | null;
      model: string;
      request: Record<string, unknown>;
      reservation?: JobReservation;
    }
  | { type: 'StartJob'; jobId: string; upstreamId: string }
  | { type: 'RecordProgress'; jobId: string; progress: number }
  | { type: 'CompleteJob'; jobId: string; result: JobResult }
  | { type: 'FailJob'; jobId: string; message: string };

export interface JobReservation {
  id: string;
  /** The instant the budgets were weighed at: the job's windows. */
  startedAt: string;
}

/** The seconds a video job asked for; without `seconds`, the 4 s most providers default to. */
const DEFAULT_VIDEO_SECONDS = 4;
export const videoSecondsOf = (request: Record<string, unknown>) =>
  typeof request.seconds === 'number' ? request.seconds : DEFAULT_VIDEO_SECONDS;

export type JobStatus = 'queued' | 'running' | 'completed' | 'failed';

export interface JobState {
  status: JobStatus | 'none';
  progress: number;
}

export const JOB_EVENT_TYPES = [
  'JobQueued',
  'JobStarted',
  'JobProgressed',
  'JobCompleted',
  'JobFailed',
] as const satisfies readonly JobEvent['type'][];

function decide(command: JobCommand, state: JobState): JobEvent[] {
  const { jobId } = command;
  if (command.type === 'QueueJob') {
    if (state.status !== 'none') throw new DomainError('conflict', `job ${jobId} already exists`);
    const { studioId, tokenId, model, request, reservation } = command;
    return [
      {
        type: 'JobQueued',
        data: {
          jobId,
          studioId,
          tokenId,
          model,
          modality: 'video',
          request,
          ...(reservation ? { reservation } : {}),
        },
      },
    ];
  }
  if (state.status === 'none') throw new DomainError('not_found', `job ${jobId} does not exist`);
  if (state.status === 'completed' || state.status === 'failed') {
    throw new DomainError(
      'conflict',
      `job ${jobId} has already ${state.status === 'completed' ? 'completed' : 'failed'}`,
    );
  }
  switch (command.type) {
    case 'StartJob':
      if (state.status !== 'queued') throw new DomainError('conflict', `job ${jobId} has already started`);
      return [{ type: 'JobStarted', data: { jobId, upstreamId: command.upstreamId } }];
    case 'RecordProgress':
      if (state.status !== 'running') throw new DomainError('conflict', `job ${jobId} is not running`);
      if (command.progress <= state.progress) return [];
      return [{ type: 'JobProgressed', data: { jobId, progress: Math.min(command.progress, 100) } }];
    case 'CompleteJob':
      if (state.status !== 'running') throw new DomainError('conflict', `job ${jobId} is not running`);
      return [{ type: 'JobCompleted', data: { jobId, result: command.result } }];
    case 'FailJob':
      return [{ type: 'JobFailed', data: { jobId, message: scrubCredentials(command.message) } }];
    default:
      return unknownCase('command', command);
  }
}

function evolve(state: JobState, event: JobEvent): JobState {
  switch (event.type) {
    case 'JobQueued':
      return { status: 'queued', progress: 0 };
    case 'JobStarted':
      return { ...state, status: 'running' };
    case 'JobProgressed':
      return { ...state, progress: event.data.progress };
    case 'JobCompleted':
      return { status: 'completed', progress: 100 };
    case 'JobFailed':
      return { ...state, status: 'failed' };
    default:
      return unknownCase('event', event);
  }
}

export const jobDecider: Decider<JobCommand, JobEvent, JobState> = {
  initialState: () => ({ status: 'none', progress: 0 }),
  decide,
  evolve,
};
