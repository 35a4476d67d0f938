import { describe, it } from 'vitest';
import { deciderSpec } from '../../../shared/decider-spec.ts';
import { type JobEvent, jobDecider } from './job.ts';

const spec = deciderSpec(jobDecider);
const jobId = 'job_1';
const queued: JobEvent = {
  type: 'JobQueued',
  data: {
    jobId,
    studioId: 's',
    tokenId: 't',
    model: 'dev/video',
    modality: 'video',
    request: { prompt: 'p' },
  },
};
const started: JobEvent = { type: 'JobStarted', data: { jobId, upstreamId: 'u1' } };
const result = { mime_type: 'image/apng', bytes: 10, sha256: 'h', file: 'media/job_1.png' };
const completed: JobEvent = { type: 'JobCompleted', data: { jobId, result } };
const failed: JobEvent = { type: 'JobFailed', data: { jobId, message: 'boom' } };

describe('job decider', () => {
  it('queues a new job', () => {
    spec
      .given([])
      .when({
        type: 'QueueJob',
        jobId,
        studioId: 's',
        tokenId: 't',
        model: 'dev/video',
        request: { prompt: 'p' },
      })
      .thenEmits([queued]);
  });

  it('refuses to queue the same job twice', () => {
    spec
      .given([queued])
      .when({ type: 'QueueJob', jobId, studioId: 's', tokenId: 't', model: 'dev/video', request: {} })
      .thenFails('conflict');
  });

  it('starts, progresses and completes', () => {
    spec.given([queued]).when({ type: 'StartJob', jobId, upstreamId: 'u1' }).thenEmits([started]);
    spec
      .given([queued, started])
      .when({ type: 'RecordProgress', jobId, progress: 40 })
      .thenEmits([{ type: 'JobProgressed', data: { jobId, progress: 40 } }]);
    spec.given([queued, started]).when({ type: 'CompleteJob', jobId, result }).thenEmits([completed]);
  });

  it('progress that does not move forward records nothing', () => {
    spec
      .given([queued, started, { type: 'JobProgressed', data: { jobId, progress: 40 } }])
      .when({ type: 'RecordProgress', jobId, progress: 30 })
      .thenEmits([]);
  });

  it('a queued job may fail before it starts (e.g. the upstream refused it)', () => {
    spec.given([queued]).when({ type: 'FailJob', jobId, message: 'boom' }).thenEmits([failed]);
  });

  it('a failure message reaches the event with credentials scrubbed', () => {
    spec
      .given([queued, started])
      .when({
        type: 'FailJob',
        jobId,
        message: 'GET https://cdn.example/v.mp4?X-Amz-Signature=f00d answered 403',
      })
      .thenEmits([
        {
          type: 'JobFailed',
          data: { jobId, message: 'GET https://cdn.example/v.mp4?X-Amz-Signature=*** answered 403' },
        },
      ]);
  });

  it.each([
    ['start twice', [queued, started], { type: 'StartJob', jobId, upstreamId: 'u2' }],
    ['complete before start', [queued], { type: 'CompleteJob', jobId, result }],
    ['progress before start', [queued], { type: 'RecordProgress', jobId, progress: 5 }],
    ['complete after completion', [queued, started, completed], { type: 'CompleteJob', jobId, result }],
    ['fail after completion', [queued, started, completed], { type: 'FailJob', jobId, message: 'x' }],
    ['start after failure', [queued, failed], { type: 'StartJob', jobId, upstreamId: 'u' }],
  ] as const)('%s is a conflict', (_name, given, command) => {
    spec
      .given([...given])
      .when(command)
      .thenFails('conflict');
  });

  it('commands on an unknown job are not_found', () => {
    spec.given([]).when({ type: 'StartJob', jobId, upstreamId: 'u' }).thenFails('not_found');
  });
});
