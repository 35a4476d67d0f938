import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { type JobRecord, jobsProjection } from '../../../projections/jobs.ts';
import { newId } from '../../../shared/crypto.ts';
import { ApiError } from '../../../shared/errors.ts';
import { type ActionContext, defineAction } from '../../../shared/http/action.ts';
import type { AiDeps } from '../deps.ts';
import { Generation } from '../generation.ts';
import { jobCommands } from '../jobs/commands.ts';
import { videoSecondsOf } from '../jobs/job.ts';
import { servedMediaType } from '../jobs/media-types.ts';

/** A job as clients see it: no internal paths, a URL for the content once completed. */
function jobView(job: JobRecord) {
  return {
    id: job.id,
    object: 'job',
    studio_id: job.studio_id,
    model: job.model,
    modality: job.modality,
    status: job.status,
    progress: job.progress,
    error: job.error,
    result: job.result && {
      mime_type: job.result.mime_type,
      bytes: job.result.bytes,
      sha256: job.result.sha256,
      content_url: `/v1/ai/jobs/content?id=${encodeURIComponent(job.id)}`,
    },
    created_at: job.created_at,
    updated_at: job.updated_at,
  };
}

function visibleJob(deps: AiDeps, id: string, ctx: ActionContext): JobRecord {
  const job = deps.gw.projections.state(jobsProjection).get(id);
  // Another studio's job is reported as absent, not forbidden: ids must not be probed across tenants.
  if (!job || (ctx.identity.kind === 'user' && job.studio_id !== ctx.identity.studioId)) {
    throw new ApiError('not_found', `job ${id} does not exist`, { param: 'id' });
  }
  return job;
}

export function videoAction(deps: AiDeps) {
  return defineAction({
    service: 'ai',
    action: 'video',
    method: 'POST',
    status: 202,
    summary: 'Generate a video as a job: 202, then poll jobs/get',
    input: z.strictObject({
      model: z.string().min(1),
      prompt: z.string().min(1, 'prompt must not be empty').max(32_000),
      seconds: z.number().int().min(1).max(60).optional(),
      size: z
        .string()
        .regex(/^\d{2,5}x\d{2,5}$/, 'WIDTHxHEIGHT, e.g. 1280x720')
        .optional(),
      studio_id: z.string().optional(),
    }),
    handler: async (input, ctx) => {
      if (ctx.identity.kind !== 'user')
        throw new ApiError('forbidden', 'video jobs belong to a studio: use a user token');
      const { model } = deps.catalog.resolve(input.model, 'video');
      const { studio_id: _studio, model: _model, ...request } = input;
      const identity = ctx.identity;
      const { studioId, tokenId } = identity;
      const release = deps.jobs.claimPlace(studioId);
      try {
        // Admitted as every generation is; the job it becomes settles its reservation.
        const generation = await Generation.start(deps, ctx, model, 'video', {
          inputTokensAtMost: 0,
          inputTokensAtLeast: 0,
          videoSeconds: videoSecondsOf(request),
        });
        const jobId = newId('job');
        const reserved = generation.queued();
        const reservation = reserved && { id: reserved.reservationId, startedAt: reserved.startedAt };
        const { position } = await jobCommands(deps.gw, 'none')(
          {
            type: 'QueueJob',
            jobId,
            studioId,
            tokenId,
            model: model.id,
            request,
            ...(reservation ? { reservation } : {}),
          },
          ctx.metadata,
        ).catch(async (error: unknown) => {
          // Not queued: its reservation is given back at once rather than left to lapse.
          const data = { studioId, tokenId, requestId: ctx.requestId };
          if (reserved) await deps.usage.release({ ...data, ...reserved }).catch(() => undefined);
          throw error;
        });
        // Queued: from here the reservation is the job's, whatever becomes of this answer.
        if (position !== undefined) await deps.gw.projections.awaitReadModels(position);
        deps.jobs.run(jobId);
        return { job: jobView(deps.gw.projections.state(jobsProjection).get(jobId)!) };
      } finally {
        release();
      }
    },
  });
}

export function jobGetAction(deps: AiDeps) {
  return defineAction({
    service: 'ai',
    action: 'jobs/get',
    method: 'GET',
    identities: ['user', 'admin'],
    summary: 'Where a job stands',
    input: z.strictObject({ id: z.string().min(1).max(100) }),
    handler: ({ id }, ctx) => ({ job: jobView(visibleJob(deps, id, ctx)) }),
  });
}

export function jobContentAction(deps: AiDeps) {
  return defineAction({
    service: 'ai',
    action: 'jobs/content',
    method: 'GET',
    identities: ['user', 'admin'],
    summary: "A completed job's content",
    produces: ['video/*', 'image/*', 'application/octet-stream'],
    input: z.strictObject({ id: z.string().min(1).max(100) }),
    handler: ({ id }, ctx) => {
      const job = visibleJob(deps, id, ctx);
      if (job.status !== 'completed' || !job.result) {
        throw new ApiError(
          'conflict',
          `job ${id} is ${job.status}; its content exists once it has completed`,
        );
      }
      // Jobs recorded before types were checked may name any type: it is checked again here.
      const media = servedMediaType(job.result.mime_type);
      ctx.res.setHeader('content-type', media.contentType);
      ctx.res.setHeader('x-content-type-options', 'nosniff');
      ctx.res.setHeader(
        'content-disposition',
        `attachment; filename="${job.id.replace(/[^A-Za-z0-9._-]/g, '_')}.${media.extension}"`,
      );
      ctx.res.setHeader('content-length', String(job.result.bytes));
      const stream = createReadStream(join(deps.dataDir, job.result.file));
      stream.on('error', () => ctx.res.destroy());
      stream.pipe(ctx.res);
      return undefined;
    },
  });
}
