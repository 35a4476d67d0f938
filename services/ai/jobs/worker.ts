import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jobsProjection } from '../../../projections/jobs.ts';
import { ApiError, messageOf } from '../../../shared/errors.ts';
import type { EventMetadata } from '../../../shared/event-store/types.ts';
import { syncPath, writeFileDurably } from '../../../shared/fsync.ts';
import type { GatewayContext } from '../../../shared/gateway-context.ts';
import type { Catalog } from '../catalog.ts';
import { costMicroUsd, type Price } from '../prices/price.ts';
import type { EnvLookup, VideoProgress } from '../providers/types.ts';
import type { UsageRecorder } from '../usage/recorder.ts';
import { jobCommands } from './commands.ts';
import { type JobCommand, videoSecondsOf } from './job.ts';
import { servedMediaType } from './media-types.ts';

const POLL_EVERY_MS = 5_000;
/** The video jobs a studio may have queued or running at once: more are refused (429), not queued. */
export const MAX_JOBS_PER_STUDIO = 8;
const GIVE_UP_AFTER_MS = 60 * 60 * 1000;
const META: EventMetadata = { actor: 'gateway' };

/**
 * Runs video jobs in this process: start at the upstream, poll until done, keep the content under
 * the data dir. Jobs left queued or running by a process that died are resumed at start.
 */
export class JobWorker {
  /**
   * Each running job's work and what stops it. A signal per job, not one for all: each job waits on
   * its signal (a poll's pause, an upstream call), and a shared one would gather a listener per job.
   */
  #running = new Map<string, { work: Promise<void>; controller: AbortController }>();
  #stopped = false;
  /** Studio → jobs being queued by requests under way in this process. */
  #claimed = new Map<string, number>();
  readonly #commands: ReturnType<typeof jobCommands>;

  constructor(
    private readonly gw: GatewayContext,
    private readonly catalog: Catalog,
    private readonly env: EnvLookup,
    private readonly usage: UsageRecorder,
    private readonly dataDir: string,
    private readonly pollEveryMs = POLL_EVERY_MS,
  ) {
    this.#commands = jobCommands(gw, 'best-effort');
  }

  /**
   * Claims a place for a new job of `studioId`, or throws 429 when the studio already has
   * `MAX_JOBS_PER_STUDIO` queued or running (counting those being queued here). The returned
   * function gives the claim back once the job is queued (or not).
   */
  claimPlace(studioId: string): () => void {
    let unfinished = this.#claimed.get(studioId) ?? 0;
    for (const job of this.gw.projections.state(jobsProjection).values()) {
      if (job.studio_id === studioId && (job.status === 'queued' || job.status === 'running')) unfinished++;
    }
    if (unfinished >= MAX_JOBS_PER_STUDIO) {
      throw new ApiError(
        'rate_limited',
        `studio ${studioId} has ${MAX_JOBS_PER_STUDIO} video jobs queued or running, the most it may; try again once one has finished`,
        { headers: { 'Retry-After': String(Math.ceil(POLL_EVERY_MS / 1000)) } },
      );
    }
    this.#claimed.set(studioId, (this.#claimed.get(studioId) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#claimed.get(studioId) ?? 1) - 1;
      if (left > 0) this.#claimed.set(studioId, left);
      else this.#claimed.delete(studioId);
    };
  }

  /** Resumes every job that has not finished. */
  resume(): void {
    for (const job of this.gw.projections.state(jobsProjection).values()) {
      if (job.status === 'queued' || job.status === 'running') this.run(job.id);
    }
  }

  run(jobId: string): void {
    if (this.#running.has(jobId) || this.#stopped) return;
    const controller = new AbortController();
    const work = this.#run(jobId, controller.signal)
      .catch((error) => this.gw.logger.error({ err: error, jobId }, 'job worker failed'))
      .finally(() => this.#running.delete(jobId));
    this.#running.set(jobId, { work, controller });
  }

  async #command(command: JobCommand): Promise<void> {
    await this.#commands(command, META);
  }

  async #run(jobId: string, signal: AbortSignal): Promise<void> {
    const job = this.gw.projections.state(jobsProjection).get(jobId);
    if (!job) return;
    const started = Date.parse(job.created_at);
    const price = this.usage.priceOf(job.model);
    const fail = async (message: string) => {
      await this.#command({ type: 'FailJob', jobId, message });
      await this.#record(jobId, 'GenerationFailed', started, price);
    };

    let entry: ReturnType<Catalog['resolve']>;
    try {
      entry = this.catalog.resolve(job.model, 'video');
    } catch {
      return fail(`model ${job.model} cannot be called any more`);
    }
    const { provider, model } = entry;
    const ctx = { env: this.env, signal, tenant: job.studio_id };
    // The job's reservation holds while it runs here, however long its upstream takes.
    const stopHolding = job.reservation
      ? this.usage.holdLease(
          { reservationId: job.reservation.id, studioId: job.studio_id },
          this.usage.leaseMsOf('video'),
        )
      : () => undefined;
    try {
      let progress: VideoProgress;
      if (job.status === 'queued' || job.upstream_id === null) {
        progress = await provider.startVideo!(model, job.request as { prompt: string }, ctx);
        await this.#command({ type: 'StartJob', jobId, upstreamId: progress.upstreamId });
      } else {
        progress = { status: 'running', upstreamId: job.upstream_id };
      }
      while (progress.status === 'running') {
        if (Date.now() - started > GIVE_UP_AFTER_MS)
          return fail('the upstream did not finish within an hour');
        if (progress.progress !== undefined)
          await this.#command({ type: 'RecordProgress', jobId, progress: progress.progress });
        await sleep(this.pollEveryMs, undefined, { signal });
        progress = await provider.pollVideo!(model, progress.upstreamId, ctx);
      }
      if (progress.status === 'failed') return fail(progress.message);
      const content = Buffer.from(progress.video.b64_json, 'base64');
      const media = servedMediaType(progress.video.mime_type);
      const file = join('media', `${jobId}.${media.extension}`);
      // On disk before the event that names it: after a power cut a completed job's video is whole.
      if (await mkdir(join(this.dataDir, 'media'), { recursive: true })) await syncPath(this.dataDir);
      await writeFileDurably(join(this.dataDir, file), content);
      await this.#command({
        type: 'CompleteJob',
        jobId,
        result: {
          mime_type: media.contentType,
          bytes: content.length,
          sha256: createHash('sha256').update(content).digest('hex'),
          file,
        },
      });
      await this.#record(jobId, 'GenerationCompleted', started, price);
    } catch (error) {
      if (signal.aborted) return; // stopping: the job resumes at the next start
      await fail(messageOf(error));
    } finally {
      stopHolding();
    }
  }

  /** Records the job's generation; a failed append is retried by the recorder, so it is not an error here. */
  async #record(
    jobId: string,
    type: 'GenerationCompleted' | 'GenerationFailed',
    started: number,
    price: Price,
  ): Promise<void> {
    const job = this.gw.projections.state(jobsProjection).get(jobId);
    if (!job) return;
    const data = {
      studioId: job.studio_id,
      tokenId: job.token_id,
      requestId: jobId,
      model: job.model,
      modality: 'video' as const,
      inputTokens: 0,
      outputTokens: 0,
      // A failed job produced no video: nothing to charge.
      costMicroUsd:
        type === 'GenerationCompleted'
          ? costMicroUsd(price, {
              inputTokens: 0,
              outputTokens: 0,
              videoSeconds: videoSecondsOf(job.request),
            })
          : 0,
      latencyMs: Date.now() - started,
      startedAt: job.reservation?.startedAt ?? job.created_at,
      ...(job.reservation ? { reservationId: job.reservation.id } : {}),
    };
    const event =
      type === 'GenerationCompleted'
        ? this.usage.record({ type, data: { ...data, status: 200 } })
        : this.usage.record({ type, data: { ...data, status: 502, errorCode: 'upstream_error' } });
    await event.catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    const running = [...this.#running.values()];
    for (const { controller } of running) controller.abort();
    await Promise.allSettled(running.map(({ work }) => work));
  }
}
