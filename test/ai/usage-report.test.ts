import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { USAGE_DIMENSIONS, USAGE_FIELDS, type UsageDimension } from '../../services/ai/usage/report.ts';
import { toCsv } from '../../shared/csv.ts';
import { parseCsv } from '../support/csv.ts';
import { expectApiError, sleep, startTestGateway, type TestGateway } from '../support/gateway.ts';

// GET /v1/ai/usage over real HTTP: group_by in every combination, cost_usd, CSV, and who sees what.

const MEASURES = ['requests', 'failures', 'input_tokens', 'output_tokens', 'avg_latency_ms', 'cost_usd'];

let gw: TestGateway;
let tokenA: { secret: string; id: string };
let tokenB: { secret: string; id: string };
let tokenOther: { secret: string; id: string };

interface UsageEventView {
  type: string;
  time: string;
  data: {
    model: string;
    modality: string;
    tokenId: string | null;
    inputTokens: number;
    outputTokens: number;
    latencyMs: number;
    costMicroUsd: number;
  };
}

async function issueToken(studioId: string) {
  const res = await gw.api('POST', '/v1/studios/tokens/apply', {
    token: gw.adminKey,
    body: { studio_id: studioId },
  });
  expect(res.status).toBe(201);
  return { secret: res.json.user_token as string, id: res.json.token.id as string };
}

const usage = (query: string, token = gw.adminKey) => gw.api('GET', `/v1/ai/usage?${query}`, { token });

async function events(): Promise<UsageEventView[]> {
  const res = await gw.api('GET', '/v1/audit/events?stream=usage-acme&limit=1000', { token: gw.adminKey });
  return res.json.items;
}

/** The groups the log itself gives, folded here the plain way: what the read model must agree with. */
function expectedGroups(log: UsageEventView[], by: readonly UsageDimension[]) {
  const groups = new Map<string, { values: (string | null)[]; events: UsageEventView[] }>();
  for (const e of log) {
    const values = by.map((d) =>
      d === 'model'
        ? e.data.model
        : d === 'modality'
          ? e.data.modality
          : d === 'token'
            ? e.data.tokenId
            : d === 'day'
              ? e.time.slice(0, 10)
              : `${e.time.slice(0, 13)}:00:00Z`,
    );
    const key = JSON.stringify(values);
    const group = groups.get(key) ?? { values, events: [] };
    group.events.push(e);
    groups.set(key, group);
  }
  const sum = (list: UsageEventView[], f: (e: UsageEventView) => number) =>
    list.reduce((s, e) => s + f(e), 0);
  return [...groups.values()].map(({ values, events: list }) => ({
    ...Object.fromEntries(by.map((d, i) => [USAGE_FIELDS[d], values[i]])),
    requests: list.length,
    failures: list.filter((e) => e.type === 'GenerationFailed').length,
    input_tokens: sum(list, (e) => e.data.inputTokens),
    output_tokens: sum(list, (e) => e.data.outputTokens),
    avg_latency_ms: Math.round(sum(list, (e) => e.data.latencyMs) / list.length),
    cost_usd: sum(list, (e) => e.data.costMicroUsd) / 1e6,
  }));
}

beforeAll(async () => {
  gw = await startTestGateway({ store: 'memory', logLevel: 'silent' });
  for (const id of ['acme', 'other']) {
    const res = await gw.api('POST', '/v1/studios/create', {
      token: gw.adminKey,
      body: { name: id, studio_id: id },
    });
    expect(res.status).toBe(201);
  }
  tokenA = await issueToken('acme');
  tokenB = await issueToken('acme');
  tokenOther = await issueToken('other');

  const generate = async (token: string, path: string, body: unknown) => {
    const res = await gw.api('POST', path, { token, body });
    expect(res.status, res.text).toBe(200);
  };
  const chat = { model: 'dev/echo', messages: [{ role: 'user', content: 'hello there' }] };
  await generate(tokenA.secret, '/v1/ai/text', { model: 'dev/echo', prompt: 'one two' });
  await generate(tokenA.secret, '/v1/ai/text', { model: 'dev/echo', prompt: 'three four five' });
  await generate(tokenA.secret, '/v1/ai/chat/completions', chat);
  await generate(tokenB.secret, '/v1/ai/chat/completions', chat);
  await generate(tokenB.secret, '/v1/ai/image', { model: 'dev/image', prompt: 'a red square' });
  await generate(tokenOther.secret, '/v1/ai/text', { model: 'dev/echo', prompt: 'elsewhere' });
  // A generation on the admin key names no token: recorded as it would be, straight into the log.
  await gw.running.ctx.events.append(
    'usage-acme',
    [
      {
        type: 'GenerationFailed',
        data: {
          studioId: 'acme',
          tokenId: null,
          requestId: 'req-admin',
          model: 'dev/echo',
          modality: 'text',
          inputTokens: 1,
          outputTokens: 0,
          latencyMs: 7,
          costMicroUsd: 1,
          status: 502,
          errorCode: 'upstream_error',
        },
      },
    ],
    { metadata: { actor: 'admin' } },
  );
  for (let i = 0; (await usage('studio_id=acme')).json.totals.requests < 6; i++) {
    if (i > 200) throw new Error('the usage read model did not show the generations');
    await sleep(10);
  }
});
afterAll(() => gw?.close());

describe('GET /v1/ai/usage group_by', () => {
  it('groups by each dimension alone', async () => {
    const byModel = await usage('studio_id=acme&group_by=model');
    expect(byModel.status).toBe(200);
    expect(byModel.json.group_by).toEqual(['model']);
    expect(byModel.json.items.map((g: { model: string; requests: number }) => [g.model, g.requests])).toEqual(
      [
        ['dev/echo', 5],
        ['dev/image', 1],
      ],
    );
    // dev/image at its list price, 0.01 per image
    expect(byModel.json.items[1].cost_usd).toBe(0.01);
    expect(Object.keys(byModel.json.items[0])).toEqual(['model', ...MEASURES]);

    const byModality = await usage('studio_id=acme&group_by=modality');
    expect(byModality.json.items.map((g: { modality: string }) => g.modality)).toEqual([
      'chat',
      'image',
      'text',
    ]);

    const byToken = await usage('studio_id=acme&group_by=token');
    expect(
      byToken.json.items.map((g: { token_id: string; requests: number }) => [g.token_id, g.requests]),
    ).toEqual([...[tokenA.id, tokenB.id].sort().map((id) => [id, id === tokenA.id ? 3 : 2]), [null, 1]]);

    const today = new Date().toISOString().slice(0, 10);
    const byDay = await usage('studio_id=acme&group_by=day');
    expect(byDay.json.items.map((g: { day: string }) => g.day)).toContain(today);
    const byHour = await usage('studio_id=acme&group_by=hour');
    for (const group of byHour.json.items) expect(group.hour).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:00:00Z$/);
  });

  it('agrees with the log in every combination of dimensions, each with cost_usd, and totals that add up', async () => {
    const log = await events();
    expect(log).toHaveLength(6);
    // all 31 non-empty subsets, each in the order of USAGE_DIMENSIONS
    for (let mask = 1; mask < 2 ** USAGE_DIMENSIONS.length; mask++) {
      const by = USAGE_DIMENSIONS.filter((_, i) => mask & (2 ** i));
      const groupBy = by.join(',');
      const res = await usage(`studio_id=acme&group_by=${groupBy}`);
      expect(res.status, groupBy).toBe(200);
      expect(res.json.items, groupBy).toEqual(expect.arrayContaining(expectedGroups(log, by)));
      expect(res.json.items, groupBy).toHaveLength(expectedGroups(log, by).length);
      for (const measure of ['requests', 'failures', 'input_tokens', 'output_tokens'] as const) {
        const sum = res.json.items.reduce((s: number, g: Record<string, number>) => s + (g[measure] ?? 0), 0);
        expect(sum, `${groupBy} ${measure}`).toBe(res.json.totals[measure]);
      }
      expect(res.json.totals.cost_usd).toBe(log.reduce((s, e) => s + e.data.costMicroUsd, 0) / 1e6);
    }
  });

  it('names the dimensions in the order given, and keeps a dimension named twice once', async () => {
    const res = await usage('studio_id=acme&group_by=token,model,token');
    expect(res.json.group_by).toEqual(['token', 'model']);
    expect(Object.keys(res.json.items[0])).toEqual(['token_id', 'model', ...MEASURES]);
  });

  it('without group_by answers as it always has: model and modality, most requests first', async () => {
    const res = await usage('studio_id=acme');
    expect(res.status).toBe(200);
    expect(Object.keys(res.json)).toEqual([
      'studio_id',
      'from',
      'to',
      'granularity',
      'group_by',
      'totals',
      'items',
    ]);
    expect(Object.keys(res.json.totals)).toEqual([
      'requests',
      'failures',
      'input_tokens',
      'output_tokens',
      'cost_usd',
    ]);
    expect(
      res.json.items.map((g: { model: string; modality: string }) => `${g.model} ${g.modality}`),
    ).toEqual(['dev/echo text', 'dev/echo chat', 'dev/image image']);
  });

  it('refuses an unknown dimension with a 400 naming group_by', async () => {
    for (const groupBy of ['model,nope', 'tokens', '', 'model,,day']) {
      const error = expectApiError(
        await usage(`studio_id=acme&group_by=${groupBy}`),
        400,
        'validation_failed',
      );
      expect(error.param, groupBy).toBe('group_by');
      expect(error.message).toContain('model, modality, token, day, hour');
    }
    const format = expectApiError(await usage('studio_id=acme&format=xml'), 400, 'validation_failed');
    expect(format.param).toBe('format');
  });
});

describe('GET /v1/ai/usage format=csv', () => {
  it('answers CSV with a header and one row per group, the same figures as JSON', async () => {
    const json = await usage('studio_id=acme&group_by=model,token');
    const res = await usage('studio_id=acme&group_by=model,token&format=csv');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="usage.csv"');
    expect(res.text.endsWith('\r\n')).toBe(true);
    const [header, ...rows] = parseCsv(res.text);
    expect(header).toEqual(['model', 'token_id', ...MEASURES]);
    expect(rows).toEqual(
      json.json.items.map((g: Record<string, string | number | null>) =>
        header!.map((field) => (g[field] === null ? '' : String(g[field]))),
      ),
    );
    // the admin key's generation: no token, an empty field
    expect(rows.some((row) => row[1] === '')).toBe(true);
  });

  it('without group_by has the model and modality columns; an empty range is the header alone', async () => {
    const [header] = parseCsv((await usage('studio_id=acme&format=csv')).text);
    expect(header).toEqual(['model', 'modality', ...MEASURES]);
    const empty = await usage('studio_id=acme&group_by=day&from=2999-01-01&format=csv');
    expect(empty.text).toBe(`day,${MEASURES.join(',')}\r\n`);
  });

  it('is read back by the tests’ RFC 4180 reader whatever the text', () => {
    const text = fc.string({ unit: 'binary' }).filter((s) => !/^[=+\-@\t\r]/.test(s));
    fc.assert(
      fc.property(fc.array(fc.tuple(text, text)), (rows) => {
        expect(parseCsv(toCsv(['a', 'b'], rows))).toEqual([['a', 'b'], ...rows]);
      }),
    );
  });
});

describe('GET /v1/ai/usage for a user', () => {
  it('shows its own studio only, grouped as asked', async () => {
    const own = await usage('group_by=token', tokenOther.secret);
    expect(own.status).toBe(200);
    expect(own.json.studio_id).toBe('other');
    expect(own.json.items.map((g: { token_id: string }) => g.token_id)).toEqual([tokenOther.id]);
    const csv = parseCsv((await usage('group_by=token&format=csv', tokenOther.secret)).text);
    expect(csv.map((row) => row[0])).toEqual(['token_id', tokenOther.id]);
    expectApiError(await usage('studio_id=acme&group_by=token', tokenOther.secret), 403, 'studio_mismatch');
    expectApiError(await usage('studio_id=acme&format=csv', tokenOther.secret), 403, 'studio_mismatch');
  });
});
