/**
 * The ways a tenant could once spend past its budgets or limits, each closed in the one admission
 * and settlement path: total budgets count open reservations, video jobs and count_tokens pass the
 * rate limits, a studio's video jobs are bounded, a price change reaches the next generation, and a
 * stream outliving its reservation's lease keeps it.
 */
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JOBS_PER_STUDIO } from '../../services/ai/jobs/worker.ts';
import { builtinAiProviders } from '../../services/ai/providers/index.ts';
import { UpstreamClient } from '../../services/ai/upstream.ts';
import { waitUntil } from '../../shared/testing/wait.ts';
import { adminOk, studioWithToken } from '../support/admin.ts';
import { expectApiError, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { gate } from '../support/mock-ai-upstreams.ts';
import { freshPostgresDatabase } from '../support/postgres.ts';
import { type Recorded, recordingServer } from '../support/recording-server.ts';
import { ok, recordedSpend, sharedMasterKey } from './support.ts';

/** Reservations lapse after this unless extended: short, so a stream can outlive several. */
const LEASE_MS = 300;

type Upstream = Awaited<ReturnType<typeof recordingServer>>;
let upstream: Upstream;
/** Holds chat answers until opened. */
let held = gate();
held.open();

const calls = (path: string) => upstream.requests.filter((r) => r.path === path).length;

function reply(req: Recorded, res: ServerResponse): unknown {
  const json = (body: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (req.path === '/v1/videos') return json({ id: 'vid_1', status: 'in_progress', progress: 0 });
  if (req.path.startsWith('/v1/videos/')) return json({ id: 'vid_1', status: 'in_progress', progress: 1 });
  if (req.path === '/v1/messages/count_tokens') return json({ input_tokens: 5 });
  const body = JSON.parse(req.body.toString());
  const usage = { prompt_tokens: 0, completion_tokens: 8, total_tokens: 8 };
  if (!body.stream) {
    return json({
      id: 'c',
      object: 'chat.completion',
      created: 1,
      model: body.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'eight words of answer for the price test' },
          finish_reason: 'stop',
        },
      ],
      usage,
    });
  }
  return (async () => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (delta: unknown, extra = {}) =>
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;
    res.write(chunk({ role: 'assistant', content: 'first ' }));
    await held.wait;
    res.write(chunk({ content: 'last' }));
    res.write(
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [], usage })}\n\n`,
    );
    res.end('data: [DONE]\n\n');
  })();
}

function holesGateway(options: { store: 'memory' | 'postgres'; databaseUrl?: string; masterKey?: string }) {
  return startTestGateway({
    ...options,
    logLevel: 'silent',
    processEnv: {
      OPENAI_API_KEY: 'sk-holes-0123456789',
      OPENAI_BASE_URL: `${upstream.url}/v1`,
      ANTHROPIC_API_KEY: 'sk-ant-api03-holes-0123456789',
      ANTHROPIC_BASE_URL: upstream.url,
    },
    ai: {
      upstream: new UpstreamClient({ timeoutMs: 10_000, idleTimeoutMs: 10_000, retries: 0, retryBaseMs: 1 }),
      providers: builtinAiProviders,
      usage: { leaseMs: { generation: LEASE_MS, job: LEASE_MS } },
      jobPollMs: 50,
    },
  });
}

let gw: TestGateway;
/** Studio `studioId` with a token, `model` priced as `price` and a hard budget of `amountUsd` in `window`. */
async function budgeted(
  studioId: string,
  model: string,
  price: Record<string, number>,
  amountUsd: number,
  window: 'day' | 'total',
  on: TestGateway = gw,
): Promise<string> {
  const { token } = await studioWithToken(on, studioId);
  await adminOk(on, 'POST', '/v1/ai/prices/upsert', { model, ...price });
  await adminOk(on, 'POST', '/v1/studios/budgets/set', {
    studio_id: studioId,
    amount_usd: amountUsd,
    window,
    mode: 'hard',
  });
  return token;
}

/** Node's warnings while this file runs (a listener-leak warning is said once per target, so from the start). */
const warnings: Error[] = [];
const onWarning = (warning: Error) => warnings.push(warning);

beforeAll(async () => {
  process.on('warning', onWarning);
  upstream = await recordingServer(reply);
  gw = await holesGateway({ store: 'memory' });
});
afterAll(async () => {
  process.off('warning', onWarning);
  held.open();
  await gw?.close();
  await upstream?.close();
});

describe('video jobs are admitted as every generation', () => {
  it('rate limits count them: the third job in a minute at rpm 2 is a 429 and never reaches the upstream', async () => {
    const { token } = await studioWithToken(gw, 'video-rpm');
    await adminOk(gw, 'POST', '/v1/studios/limits/set', { studio_id: 'video-rpm', rpm: 2 });
    const before = calls('/v1/videos');
    const video = () =>
      gw.api('POST', '/v1/ai/video', {
        token,
        body: { model: 'openai/sora-2', prompt: 'a cat', seconds: 4 },
      });
    expect((await video()).status).toBe(202);
    expect((await video()).status).toBe(202);
    expectApiError(await video(), 429, 'rate_limited');
    await waitUntil(() => calls('/v1/videos') - before === 2, 'two jobs started');
    await sleep(100);
    expect(calls('/v1/videos') - before).toBe(2);
  });

  it(`a studio has at most ${MAX_JOBS_PER_STUDIO} jobs queued or running; the next is a 429`, async () => {
    const { token } = await studioWithToken(gw, 'video-cap');
    const video = () =>
      gw.api('POST', '/v1/ai/video', {
        token,
        body: { model: 'openai/sora-2', prompt: 'a dog', seconds: 4 },
      });
    const answers = await Promise.all(Array.from({ length: MAX_JOBS_PER_STUDIO + 3 }, video));
    expect(answers.filter((a) => a.status === 202)).toHaveLength(MAX_JOBS_PER_STUDIO);
    for (const refused of answers.filter((a) => a.status !== 202)) {
      expect(expectApiError(refused, 429, 'rate_limited').message).toContain(
        `${MAX_JOBS_PER_STUDIO} video jobs queued or running`,
      );
    }
  });

  it('jobs of several studios run at once, each stopped by its own signal: no listener-leak warning', async () => {
    const polls = () => upstream.requests.filter((r) => r.path.startsWith('/v1/videos/')).length;
    const before = polls();
    const studios = await Promise.all(['video-many-a', 'video-many-b'].map((id) => studioWithToken(gw, id)));
    const jobs = MAX_JOBS_PER_STUDIO - 2;
    const answers = await Promise.all(
      studios.flatMap(({ token }) =>
        Array.from({ length: jobs }, () =>
          gw.api('POST', '/v1/ai/video', {
            token,
            body: { model: 'openai/sora-2', prompt: 'a cat', seconds: 4 },
          }),
        ),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 202));
    // Every job, this test's and the earlier ones', waits and polls at once, over and over.
    await waitUntil(() => polls() - before >= 3 * studios.length * jobs, 'every job polled a few times');
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message)).toEqual(
      [],
    );
  });

  it("a job's reservation holds while it runs, however long past its lease", async () => {
    const token = await budgeted('video-lease', 'openai/sora-2', { per_video_second: 0.1 }, 1, 'total');
    const queued = await gw.api('POST', '/v1/ai/video', {
      token,
      body: { model: 'openai/sora-2', prompt: 'a bird', seconds: 4 },
    });
    expect(queued.status).toBe(202);
    await sleep(LEASE_MS * 3);
    const [budget] = (await adminOk(gw, 'GET', '/v1/studios/budgets/list?studio_id=video-lease')).json.items;
    expect(budget.reserved_usd).toBeCloseTo(0.4, 6);
    // Six more seconds do not fit beside the four still reserved.
    expectApiError(
      await gw.api('POST', '/v1/ai/video', {
        token,
        body: { model: 'openai/sora-2', prompt: 'more', seconds: 7 },
      }),
      402,
      'budget_exceeded',
    );
  });
});

describe('count_tokens is admitted as every generation', () => {
  it('rate limits count it: the third at rpm 2 is a 429 and never reaches the upstream', async () => {
    const { token } = await studioWithToken(gw, 'count-rpm');
    await adminOk(gw, 'POST', '/v1/studios/limits/set', { studio_id: 'count-rpm', rpm: 2 });
    const before = calls('/v1/messages/count_tokens');
    const count = () =>
      gw.api('POST', '/v1/ai/anthropic/v1/messages/count_tokens', {
        token,
        body: { model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] },
      });
    expect((await count()).json).toEqual({ input_tokens: 5 });
    expect((await count()).status).toBe(200);
    expect((await count()).status).toBe(429);
    expect(calls('/v1/messages/count_tokens') - before).toBe(2);
  });
});

describe('total budgets', () => {
  it('count open reservations: parallel answers against a total budget never spend past it', async () => {
    // 1 dollar a token of output: each answer's cap of 10 reserves $10 of a $35 budget.
    const token = await budgeted(
      'total-par',
      'openai/gpt-4o-mini',
      { input_per_mtok: 0, output_per_mtok: 1_000_000 },
      35,
      'total',
    );
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        gw.api('POST', '/v1/ai/chat/completions', {
          token,
          body: { model: 'openai/gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
        }),
      ),
    );
    // Answers settle below what they reserved (8 tokens of 10), so a few more than three fit.
    const served = answers.filter((a) => a.status === 200).length;
    expect(served).toBeGreaterThanOrEqual(3);
    expect(served).toBeLessThan(8);
    for (const refused of answers.filter((a) => a.status !== 200))
      expectApiError(refused, 402, 'budget_exceeded');
    expect(await recordedSpend(gw, 'total-par')).toBeLessThanOrEqual(35_000_000);
    await adminOk(gw, 'POST', '/v1/ai/prices/remove', { model: 'openai/gpt-4o-mini' });
  });
});

describe('a stream outliving its lease', () => {
  /** Streams on `on` for four leases; answers the studio's usage stream and its budget during and after. */
  async function longStream(on: TestGateway, studioId: string) {
    const token = await budgeted(
      studioId,
      'openai/gpt-4o',
      { input_per_mtok: 0, output_per_mtok: 100_000 },
      1,
      'day',
      on,
    );
    const budget = async () =>
      (await adminOk(on, 'GET', `/v1/studios/budgets/list?studio_id=${studioId}`)).json.items[0];
    held = gate();
    const streaming = on.api('POST', '/v1/ai/chat/completions', {
      token,
      body: {
        model: 'openai/gpt-4o',
        max_tokens: 8,
        stream: true,
        messages: [{ role: 'user', content: 'go' }],
      },
    });
    await sleep(LEASE_MS * 4);
    const during = await budget();
    held.open();
    expect((await streaming).status).toBe(200);
    const types = (await on.running.ctx.events.readStream(`usage-${studioId}`)).map((e) =>
      e.type === 'GenerationCompleted' &&
      (e.data as { reservedMicroUsd?: number }).reservedMicroUsd !== undefined
        ? 'GenerationCompleted (reserved)'
        : e.type,
    );
    const after = await budget();
    await adminOk(on, 'POST', '/v1/ai/prices/remove', { model: 'openai/gpt-4o' });
    return { during, types, after };
  }

  it("keeps its reservation on the embedded log: held in the process, lease and all, and recorded by the generation's event", async () => {
    const { during, types, after } = await longStream(gw, 'long-stream');
    expect(during.reserved_usd).toBeCloseTo(0.8, 6);
    expect(types).toEqual(['GenerationCompleted (reserved)']);
    expect(after).toMatchObject({ reserved_usd: 0, spent_usd: 0.8 });
  });

  it('keeps its reservation on a log gateways share: the lease is extended in the log while it streams, and settled once it ends', async (t) => {
    const db = await freshPostgresDatabase();
    if (!db) return t.skip();
    const shared = await holesGateway({
      store: 'postgres',
      databaseUrl: db.url,
      masterKey: sharedMasterKey(),
    });
    try {
      const { during, types, after } = await longStream(shared, 'long-stream-shared');
      expect(during.reserved_usd).toBeCloseTo(0.8, 6);
      expect(types[0]).toBe('BudgetReserved');
      expect(types.filter((type) => type === 'BudgetLeaseExtended').length).toBeGreaterThanOrEqual(3);
      expect(types.at(-1)).toBe('GenerationCompleted');
      expect(after).toMatchObject({ reserved_usd: 0, spent_usd: 0.8 });
    } finally {
      await shared.close();
      await db.drop();
    }
  });
});

describe('a price change', () => {
  /** 50 cents an output token: each answer (8 output tokens) costs $4 at first, then $8. */
  async function priceChange(first: TestGateway, second: TestGateway, studioId: string) {
    const { token } = await studioWithToken(first, studioId);
    const set = (output_per_mtok: number) =>
      adminOk(first, 'POST', '/v1/ai/prices/upsert', {
        model: 'openai/gpt-4.1',
        input_per_mtok: 0,
        output_per_mtok,
      });
    const answer = (on: TestGateway) =>
      on.api('POST', '/v1/ai/chat/completions', {
        token,
        body: { model: 'openai/gpt-4.1', messages: [{ role: 'user', content: 'price' }] },
      });
    await set(500_000);
    await waitUntil(async () => {
      const prices = await second.api('GET', '/v1/ai/prices', { token: second.adminKey });
      return (
        prices.json.items.find((p: { model: string }) => p.model === 'openai/gpt-4.1')?.output_per_mtok ===
        500_000
      );
    }, 'the second gateway sees the first price');
    ok(await answer(second));
    await set(1_000_000);
    await sleep(200);
    ok(await answer(second));
    await waitUntil(
      async () => (await recordedSpend(first, studioId)) >= 12_000_000,
      'both answers recorded',
    ).catch(() => undefined);
    expect(await recordedSpend(first, studioId)).toBe(4_000_000 + 8_000_000);
  }

  it('reaches the next generation on the same process', async () => {
    await priceChange(gw, gw, 'price-one');
  });

  it('reaches the next generation on another gateway sharing PostgreSQL 200 ms later', async (t) => {
    const db = await freshPostgresDatabase();
    if (!db) return t.skip();
    const masterKey = sharedMasterKey();
    const a = await holesGateway({ store: 'postgres', databaseUrl: db.url, masterKey });
    const b = await holesGateway({ store: 'postgres', databaseUrl: db.url, masterKey });
    try {
      await priceChange(a, b, 'price-two');
    } finally {
      await a.close();
      await b.close();
      await db.drop();
    }
  });
});
