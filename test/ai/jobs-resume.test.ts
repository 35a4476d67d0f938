import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { devProvider } from '../../services/ai/providers/dev/provider.ts';
import type { Provider, VideoProgress } from '../../services/ai/providers/types.ts';
import { type RunningGateway, startGateway } from '../../services/gateway/gateway.ts';
import { loadConfig } from '../../shared/config.ts';
import { recordFileSyncs } from '../../shared/fsync-testing.ts';
import { waitUntil } from '../../shared/testing/wait.ts';

/** A video upstream that keeps a job running until `finished` is set. */
let finished = false;
let starts = 0;
const slowVideo: Provider = {
  id: 'slowvid',
  name: 'Slow video',
  env: [],
  models: () => [
    {
      id: 'slowvid/v1',
      name: 'v',
      description: '',
      modalities: ['video'],
      tags: [],
      meta: {},
      upstreamModel: 'v1',
    },
  ],
  async startVideo(): Promise<VideoProgress> {
    starts++;
    return { status: 'running', upstreamId: 'up-1', progress: 10 };
  },
  async pollVideo(_m, upstreamId): Promise<VideoProgress> {
    if (!finished) return { status: 'running', upstreamId, progress: 50 };
    return {
      status: 'completed',
      upstreamId,
      video: { b64_json: Buffer.from('video bytes').toString('base64'), mime_type: 'video/mp4' },
    };
  },
};

const adminKey = 'admin-key-for-job-tests-0123456789abcdef';
let dataDir: string;
let gw: RunningGateway | undefined;

async function start() {
  const config = loadConfig({
    STUDIO_EVENT_STORE: 'sqlite',
    STUDIO_DATA_DIR: dataDir,
    ADMIN_SECRET_KEY: adminKey,
    STUDIO_MASTER_KEY: 'c'.repeat(64),
    STUDIO_GATEWAY_PORT: '0',
    LOG_LEVEL: 'silent',
  });
  gw = await startGateway({
    config,
    processEnv: {},
    ai: { providers: () => [devProvider, slowVideo], jobPollMs: 20 },
  });
  return gw;
}

afterAll(async () => {
  await gw?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('video jobs survive a restart', { timeout: 90_000 }, () => {
  it('a job still running when the gateway stops is followed again at the next start, not started twice', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'studio-jobs-'));
    let g = await start();
    const post = (path: string, body: unknown, token = adminKey) =>
      fetch(`${g.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    await post('/v1/studios/create', { name: 'J', studio_id: 'j' });
    const token = (
      (await (await post('/v1/studios/tokens/apply', { studio_id: 'j' })).json()) as { user_token: string }
    ).user_token;
    const queued = (await (
      await post('/v1/ai/video', { model: 'slowvid/v1', prompt: 'a slow pan' }, token)
    ).json()) as { job: { id: string } };
    const get = async () =>
      (
        (await (
          await fetch(`${g.url}/v1/ai/jobs/get?id=${queued.job.id}`, {
            headers: { authorization: `Bearer ${token}` },
          })
        ).json()) as {
          job: { status: string; progress: number; result: { bytes: number } | null };
        }
      ).job;
    await waitUntil(async () => (await get()).progress >= 50, 'the job is half done', 2_000);
    expect(await get()).toMatchObject({ status: 'running', progress: 50 });

    await g.close();
    finished = true;
    const syncs = await recordFileSyncs(dataDir);
    try {
      g = await start();
      await waitUntil(
        async () => (await get()).status === 'completed',
        'the job completes after the restart',
        4_000,
      );
      expect(await get()).toMatchObject({ status: 'completed', progress: 100, result: { bytes: 11 } });
      expect(starts).toBe(1);
      // The video, and the folder naming it, were put on disk before the job was recorded completed.
      expect(syncs.synced).toEqual(expect.arrayContaining([`media/${queued.job.id}.mp4`, 'media', '.']));
    } finally {
      syncs.stop();
    }
  });
});
