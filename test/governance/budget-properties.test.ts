/**
 * Budgets hold against upstreams and clients that misbehave, whatever the schedule. fast-check
 * generates a studio's budgets (studio or token, every window, hard or soft) and a burst of
 * requests in every wire format and modality (chat completions, Anthropic Messages (native, and translated to chat), Responses,
 * text, stream, embeddings, image, speech and transcription, a fallback route, cache hits), each with its own misbehaving upstream answer (usage
 * left out, under-reported or zero; tool calls and reasoning streamed; the cap ignored; the stream
 * broken off or stalled past the idle timeout) and its own client (reading all, or going away after
 * a few chunks). For every schedule:
 *
 * - recorded spend never passes a hard budget, and spent + reserved never does while it runs;
 * - every generation is charged at least the gateway's own estimate of what its client received;
 * - a refused request (402, 429) caused no upstream call;
 * - folding the log again gives the balances the read model has.
 *
 * On one process (SQLite), and on two gateways sharing PostgreSQL. `BUDGET_PROPERTY_RUNS` sets the
 * number of schedules (default 20 on one process, a third of that on two).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentOutputText } from '../../services/ai/anthropic-api/wire.ts';
import { emptyLedger, foldLedger } from '../../services/ai/budgets/ledger.ts';
import { budgetsProjection } from '../../services/ai/budgets/read-model.ts';
import { outputTextOf } from '../../services/ai/chat/wire.ts';
import { builtinAiProviders } from '../../services/ai/providers/index.ts';
import { itemsOutputText } from '../../services/ai/responses/wire.ts';
import { UpstreamClient } from '../../services/ai/upstream.ts';
import type { UsageEvent } from '../../services/ai/usage/events.ts';
import { tokensAtLeast } from '../../services/ai/usage/metering.ts';
import { waitUntil } from '../../shared/testing/wait.ts';
import { adminOk } from '../support/admin.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import type { Json } from '../support/mock-ai-upstreams.ts';
import { freshPostgresDatabase } from '../support/postgres.ts';
import { adversarialUpstream, caseText, type Misbehaviour } from './adversary.ts';
import { sharedMasterKey } from './support.ts';

const RUNS = Number(process.env.BUDGET_PROPERTY_RUNS ?? 20);
/** micro-dollars per token: what each model costs here. */
const PRICE = { input_per_mtok: 10, output_per_mtok: 20 };
const PRICED = ['compat/m', 'compat/bad', 'anthropic/claude-sonnet-4-5', 'compat/e', 'dev/asr'];
/** The offline media models, priced per image and per second of audio. */
const MEDIA_PRICES = {
  'dev/image': { per_image: 0.0005 },
  'dev/tts': { per_audio_second: 0.0001 },
  'dev/asr': { per_audio_second: 0.0001 },
};

const KINDS = [
  'chat',
  'chat-stream',
  'messages',
  'messages-stream',
  'messages-translated',
  'text',
  'stream',
  'responses',
  'responses-stream',
  'embeddings',
  'image',
  'tts',
  'asr',
  'route',
  'route-stream',
  'repeat',
] as const;
type Kind = (typeof KINDS)[number];

interface Request {
  kind: Kind;
  token: 0 | 1;
  maxTokens: number | undefined;
  behaviour: Omit<Misbehaviour, 'nonce'>;
  /** The client goes away after reading this many chunks of the answer. */
  disconnectAfter: number | undefined;
  delayMs: number;
}
interface Budget {
  scope: 'studio' | 0 | 1;
  window: 'total' | 'day' | 'month';
  mode: 'hard' | 'soft';
  amountMicroUsd: number;
}
interface Schedule {
  budgets: Budget[];
  requests: Request[];
  cached: boolean;
}

const scheduleArb: fc.Arbitrary<Schedule> = fc.record({
  budgets: fc.uniqueArray(
    fc.record({
      scope: fc.constantFrom<Budget['scope']>('studio', 0, 1),
      window: fc.constantFrom<Budget['window']>('total', 'day', 'month'),
      mode: fc.constantFrom<Budget['mode']>('hard', 'hard', 'soft'),
      amountMicroUsd: fc.integer({ min: 200, max: 12_000 }),
    }),
    { minLength: 1, maxLength: 3, selector: (b) => b.scope },
  ),
  requests: fc.array(
    fc.record({
      kind: fc.constantFrom(...KINDS),
      token: fc.constantFrom<0 | 1>(0, 1),
      maxTokens: fc.option(fc.integer({ min: 1, max: 80 }), { nil: undefined }),
      behaviour: fc.record({
        usage: fc.constantFrom<Misbehaviour['usage']>('honest', 'under', 'omit', 'zero'),
        words: fc.integer({ min: 0, max: 60 }),
        tools: fc.boolean(),
        reasoning: fc.boolean(),
        ignoresCap: fc.boolean(),
        breakAfter: fc.option(fc.integer({ min: 1, max: 40 }), { nil: undefined }),
        stallMs: fc.option(fc.constantFrom(20, 700), { nil: undefined }),
      }),
      disconnectAfter: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
      delayMs: fc.integer({ min: 0, max: 20 }),
    }),
    { minLength: 1, maxLength: 8 },
  ),
  cached: fc.boolean(),
});

type Upstream = Awaited<ReturnType<typeof adversarialUpstream>>;
let upstream: Upstream;

beforeAll(async () => {
  upstream = await adversarialUpstream();
});
afterAll(async () => {
  await upstream?.close();
});

function adversarialGateway(options: {
  store: 'sqlite' | 'postgres';
  databaseUrl?: string;
  masterKey?: string;
}) {
  return startTestGateway({
    ...options,
    logLevel: 'silent',
    processEnv: {
      OPENAI_COMPATIBLE_BASE_URL: `${upstream.url}/v1`,
      OPENAI_COMPATIBLE_MODELS: 'm,bad',
      OPENAI_COMPATIBLE_EMBEDDING_MODELS: 'e',
      ANTHROPIC_API_KEY: 'sk-ant-api03-adversary-0123456789',
      ANTHROPIC_BASE_URL: upstream.url,
    },
    ai: {
      // A stall past 400 ms is a timeout mid-stream.
      upstream: new UpstreamClient({ timeoutMs: 5_000, idleTimeoutMs: 400, retries: 0, retryBaseMs: 1 }),
      providers: builtinAiProviders,
    },
  });
}

async function priced(gw: TestGateway): Promise<void> {
  for (const model of PRICED) await adminOk(gw, 'POST', '/v1/ai/prices/upsert', { model, ...PRICE });
  for (const [model, price] of Object.entries(MEDIA_PRICES))
    await adminOk(gw, 'POST', '/v1/ai/prices/upsert', { model, ...price });
  await adminOk(gw, 'POST', '/v1/ai/routes/upsert', {
    id: 'fallback',
    strategy: 'fallback',
    targets: [{ model: 'compat/bad' }, { model: 'compat/m' }],
  });
}

let studioCount = 0;

/** A studio with two tokens and the schedule's budgets, seen by every gateway before it runs. */
async function studioFor(gateways: TestGateway[], schedule: Schedule) {
  const [gw] = gateways as [TestGateway];
  const studioId = `prop${++studioCount}${Math.random().toString(36).slice(2, 6)}`;
  await adminOk(gw, 'POST', '/v1/studios/create', {
    name: studioId,
    studio_id: studioId,
    ...(schedule.cached ? { cache_ttl_s: 600 } : {}),
  });
  const tokens: { token: string; tokenId: string }[] = [];
  for (let i = 0; i < 2; i++) {
    const issued = (await adminOk(gw, 'POST', '/v1/studios/tokens/apply', { studio_id: studioId })).json;
    tokens.push({ token: issued.user_token, tokenId: issued.token.id });
  }
  for (const budget of schedule.budgets) {
    await adminOk(gw, 'POST', '/v1/studios/budgets/set', {
      studio_id: studioId,
      ...(budget.scope === 'studio' ? {} : { token_id: tokens[budget.scope]!.tokenId }),
      amount_usd: budget.amountMicroUsd / 1_000_000,
      window: budget.window,
      mode: budget.mode,
    });
  }
  for (const other of gateways) {
    await waitUntil(async () => {
      const listed = await other.api('GET', `/v1/studios/budgets/list?studio_id=${studioId}`, {
        token: other.adminKey,
      });
      return listed.json?.items?.length === schedule.budgets.length;
    }, 'every gateway sees the budgets');
  }
  return { studioId, tokens };
}

/** The path and body a request of `kind` sends. */
function requestOf(kind: Exclude<Kind, 'repeat'>, prompt: string, maxTokens: number | undefined) {
  const cap = maxTokens === undefined ? {} : { max_tokens: maxTokens };
  const messages = [{ role: 'user', content: prompt }];
  switch (kind) {
    case 'chat':
    case 'chat-stream':
    case 'route':
    case 'route-stream':
      return {
        path: '/v1/ai/chat/completions',
        body: {
          model: kind.startsWith('route') ? 'fallback' : 'compat/m',
          messages,
          ...cap,
          ...(kind.endsWith('stream') ? { stream: true } : {}),
        },
      };
    case 'messages':
    case 'messages-stream':
    case 'messages-translated':
      return {
        path: '/v1/ai/anthropic/v1/messages',
        body: {
          // Translated to chat on compat/m, native on anthropic/*.
          model: kind === 'messages-translated' ? 'compat/m' : 'anthropic/claude-sonnet-4-5',
          max_tokens: maxTokens ?? 100,
          messages,
          ...(kind !== 'messages' ? { stream: true } : {}),
        },
      };
    case 'text':
    case 'stream':
      return { path: `/v1/ai/${kind}`, body: { model: 'compat/m', prompt, ...cap } };
    case 'responses':
    case 'responses-stream':
      return {
        path: '/v1/ai/responses',
        body: {
          model: 'compat/m',
          input: prompt,
          store: false,
          ...(maxTokens === undefined ? {} : { max_output_tokens: Math.max(16, maxTokens) }),
          ...(kind === 'responses-stream' ? { stream: true } : {}),
        },
      };
    case 'embeddings':
      return { path: '/v1/ai/embeddings', body: { model: 'compat/e', input: [prompt, 'and another text'] } };
    case 'image':
      return { path: '/v1/ai/image', body: { model: 'dev/image', prompt, n: 1 + ((maxTokens ?? 0) % 2) } };
    case 'tts':
      return { path: '/v1/ai/tts', body: { model: 'dev/tts', input: prompt.slice(0, 400) } };
    case 'asr':
      return {
        path: '/v1/ai/asr',
        body: {
          model: 'dev/asr',
          audio: Buffer.alloc(1_000 * (1 + ((maxTokens ?? 0) % 5))).toString('base64'),
          mime_type: 'audio/wav',
        },
      };
  }
}

interface Outcome {
  kind: Exclude<Kind, 'repeat'>;
  nonce: string;
  status: number;
  requestId: string;
  /** Every output field the client received, as text. */
  delivered: string;
}

/** Sends one request as a client that may go away early; answers what it received. */
async function send(
  gw: TestGateway,
  token: string,
  kind: Exclude<Kind, 'repeat'>,
  request: { path: string; body: unknown },
  disconnectAfter: number | undefined,
): Promise<{ status: number; requestId: string; delivered: string }> {
  const controller = new AbortController();
  const res = await fetch(`${gw.url}${request.path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(request.body),
    signal: controller.signal,
  });
  const requestId = res.headers.get('x-request-id') ?? '';
  let text = '';
  const decoder = new TextDecoder();
  let chunks = 0;
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      text += decoder.decode(chunk, { stream: true });
      if (disconnectAfter !== undefined && ++chunks >= disconnectAfter) {
        controller.abort();
        break;
      }
    }
  } catch {
    // the client went away, or the stream broke: what arrived is what was delivered
  }
  return { status: res.status, requestId, delivered: res.status === 200 ? deliveredText(kind, text) : '' };
}

/** Every output field in an answer's body as far as it arrived: what its client was given. */
function deliveredText(kind: Exclude<Kind, 'repeat'>, body: string): string {
  const frames = body
    .split('\n\n')
    .map((frame) => /^data: (.*)$/m.exec(frame)?.[1])
    .filter((data): data is string => data !== undefined && data !== '[DONE]')
    .flatMap((data) => {
      try {
        return [JSON.parse(data) as Json];
      } catch {
        return [];
      }
    });
  const whole = () => {
    try {
      return JSON.parse(body) as Json;
    } catch {
      return undefined;
    }
  };
  switch (kind) {
    case 'chat':
    case 'route': {
      const message = whole()?.choices?.[0]?.message;
      return message ? outputTextOf(message) : '';
    }
    case 'chat-stream':
    case 'route-stream':
      return frames
        .map((f) => (f.choices ?? []).map((c: Json) => outputTextOf(c.delta ?? {})).join(''))
        .join('');
    case 'messages':
      return contentOutputText(whole()?.content ?? []);
    case 'messages-stream':
    case 'messages-translated':
      return frames
        .map(
          (f) =>
            `${f.content_block?.name ?? ''}${f.delta?.text ?? ''}${f.delta?.thinking ?? ''}${f.delta?.partial_json ?? ''}`,
        )
        .join('');
    case 'text':
      return whole()?.parts?.[0]?.text ?? '';
    case 'stream':
      return frames.map((f) => (typeof f.text === 'string' ? f.text : '')).join('');
    case 'responses':
      return itemsOutputText(whole()?.output ?? []);
    case 'responses-stream':
      return frames
        .map((f) => (f.type?.endsWith('.delta') && typeof f.delta === 'string' ? f.delta : ''))
        .join('');
    case 'asr':
      return typeof whole()?.text === 'string' ? whole()!.text : '';
    case 'embeddings':
    case 'image':
    case 'tts':
      return '';
  }
}

/** Runs one schedule against `gateways` (requests spread over them) and checks every property. */
async function check(gateways: TestGateway[], schedule: Schedule): Promise<void> {
  const [gw] = gateways as [TestGateway];
  const { studioId, tokens } = await studioFor(gateways, schedule);
  const hard = schedule.budgets.filter((b) => b.mode === 'hard');

  // While the burst runs, spent + reserved never passes a hard budget.
  let watching = true;
  const overdrawn: string[] = [];
  const watcher = (async () => {
    while (watching) {
      for (const other of gateways) {
        const listed = await other.api('GET', `/v1/studios/budgets/list?studio_id=${studioId}`, {
          token: other.adminKey,
        });
        for (const b of listed.json?.items ?? []) {
          const held = Math.round((b.spent_usd + b.reserved_usd) * 1_000_000);
          if (b.mode === 'hard' && held > Math.round(b.amount_usd * 1_000_000))
            overdrawn.push(`${b.token_id ?? 'studio'} ${b.window}: ${held} of ${b.amount_usd * 1_000_000}`);
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
  })();

  const sent: { kind: Exclude<Kind, 'repeat'>; request: { path: string; body: unknown }; nonce: string }[] =
    [];
  const outcomes = await Promise.all(
    schedule.requests.map(async (r, i): Promise<Outcome> => {
      await new Promise((resolve) => setTimeout(resolve, r.delayMs));
      const earlier = sent.findLast((s) => !s.kind.endsWith('stream'));
      const repeat = r.kind === 'repeat' && earlier !== undefined;
      let kind: Exclude<Kind, 'repeat'>;
      let request: { path: string; body: unknown };
      let nonce: string;
      if (repeat) {
        ({ kind, request, nonce } = earlier);
      } else {
        kind = r.kind === 'repeat' ? 'chat' : r.kind;
        nonce = `${studioId}-${i}`;
        request = requestOf(kind, caseText({ ...r.behaviour, nonce }), r.maxTokens);
        sent.push({ kind, request, nonce });
      }
      const target = gateways[i % gateways.length]!;
      const answer = await send(target, tokens[r.token]!.token, kind, request, r.disconnectAfter);
      return { kind, nonce, ...answer };
    }),
  );
  watching = false;
  await watcher;
  expect(overdrawn, 'spent + reserved past a hard budget').toEqual([]);

  // Every generation's event is in the log once its answer has ended.
  const answered = outcomes.filter((o) => o.status === 200 || o.status >= 500 || o.status === 0);
  let events: { type: string; data: Json; createdAt: string }[] = [];
  await waitUntil(async () => {
    events = (await gw.running.ctx.events.readStream(`usage-${studioId}`)) as typeof events;
    const recorded = new Set(events.map((e) => e.data.requestId));
    return answered.every((o) => recorded.has(o.requestId));
  }, 'every answered generation recorded').catch(() => undefined);
  const generations = events.filter((e) => e.type.startsWith('Generation'));

  // Recorded spend never passes a hard budget (every event is in this day, month and total).
  for (const budget of hard) {
    const tokenId = budget.scope === 'studio' ? undefined : tokens[budget.scope]!.tokenId;
    const spent = generations
      .filter((e) => tokenId === undefined || e.data.tokenId === tokenId)
      .reduce((sum, e) => sum + e.data.costMicroUsd, 0);
    expect(spent, `spend under the ${budget.window} budget of ${budget.scope}`).toBeLessThanOrEqual(
      budget.amountMicroUsd,
    );
  }

  // Every generation is charged at least the estimate of what its client received.
  for (const outcome of outcomes) {
    const event = generations.find((e) => e.data.requestId === outcome.requestId);
    if (!event || !outcome.delivered) continue;
    expect(event.data.outputTokens, `${outcome.kind} ${outcome.nonce} charged`).toBeGreaterThanOrEqual(
      tokensAtLeast(outcome.delivered),
    );
  }

  // A refused request caused no upstream call (but a route's failing target, which answered 503).
  // A repeated request shares its original's marker: only a marker every sender was refused counts.
  const refused = (o: Outcome) => o.status === 402 || o.status === 429;
  for (const outcome of outcomes) {
    if (!outcomes.filter((o) => o.nonce === outcome.nonce).every(refused)) continue;
    const calls = upstream.calls.filter((c) => c.nonce === outcome.nonce && c.model !== 'bad');
    expect(calls, `${outcome.kind} ${outcome.nonce} refused ${outcome.status}`).toEqual([]);
  }

  // Folding the log again gives the read model's balances, on every gateway. The log is read again
  // until the read model shows all of it: a released lease may still be appended after the reads above.
  for (const other of gateways) {
    const ledgerOf = () => other.running.ctx.projections.state(budgetsProjection).get(studioId)?.ledger;
    await waitUntil(async () => {
      events = (await gw.running.ctx.events.readStream(`usage-${studioId}`)) as typeof events;
      return ledgerOf()?.revision === events.length - 1;
    }, 'the read model caught up');
    const rebuilt = emptyLedger();
    for (const e of events) foldLedger(rebuilt, e as unknown as UsageEvent, e.createdAt);
    const ledger = ledgerOf()!;
    expect(new Map(ledger.spent)).toEqual(rebuilt.spent);
    expect(new Map(ledger.open)).toEqual(rebuilt.open);
  }
}

describe('budgets against misbehaving upstreams and clients (property-based)', () => {
  it(`one process (SQLite): ${RUNS} schedules`, async () => {
    const gw = await adversarialGateway({ store: 'sqlite' });
    try {
      await priced(gw);
      await fc.assert(
        fc.asyncProperty(scheduleArb, (schedule) => check([gw], schedule)),
        { numRuns: RUNS, endOnFailure: true },
      );
    } finally {
      await gw.close();
    }
  }, 600_000);

  it(`two gateways sharing PostgreSQL: ${Math.ceil(RUNS / 3)} schedules`, async (t) => {
    const db = await freshPostgresDatabase();
    if (!db) return t.skip();
    const masterKey = sharedMasterKey();
    const a = await adversarialGateway({ store: 'postgres', databaseUrl: db.url, masterKey });
    const b = await adversarialGateway({ store: 'postgres', databaseUrl: db.url, masterKey });
    try {
      await priced(a);
      await waitUntil(async () => {
        const routes = await b.api('GET', '/v1/ai/routes/list', { token: b.adminKey });
        return routes.json?.items?.length === 1;
      }, 'the second gateway sees the route');
      await fc.assert(
        fc.asyncProperty(scheduleArb, (schedule) => check([a, b], schedule)),
        { numRuns: Math.ceil(RUNS / 3), endOnFailure: true },
      );
    } finally {
      await a.close();
      await b.close();
      await db.drop();
    }
  }, 600_000);
});
