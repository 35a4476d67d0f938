import { describe, expect, it } from 'vitest';
import { expectApiError, sleep } from '../../support/gateway.ts';
import type { Json } from '../../support/mock-ai-upstreams.ts';
import { failWith, useRoutedGateway } from './support.ts';

/** The breaker of each target: cooled down after failures, skipped meanwhile, tried again after. */
const r = useRoutedGateway();
let n = 0;

const chat = (model: string) =>
  r.pg.post('/v1/ai/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }] });
const targetsOf = async (id: string) =>
  (await r.admin('GET', '/v1/ai/routes/list')).json.items.find((route: Json) => route.id === id).targets;

describe('cooldown', () => {
  it('skips a target that failed N times within the window, shows it cooling, and tries it again after', async () => {
    const id = `cool${++n}`;
    await r.upsert({
      id,
      strategy: 'fallback',
      targets: [{ model: 'compat/a' }, { model: 'compat/b' }],
      cooldown: { failures: 2, window_s: 60, cooldown_s: 1 },
    });
    r.script('a', failWith(503), failWith(503));
    expect((await chat(id)).status).toBe(200);
    expect((await targetsOf(id))[0]).toMatchObject({ state: 'healthy', recent_failures: 1 });
    expect((await chat(id)).status).toBe(200);
    expect(r.calls()).toEqual(['a', 'b', 'a', 'b']);

    const [a, b] = await targetsOf(id);
    expect(a).toMatchObject({ model: 'compat/a', state: 'cooling', recent_failures: 0 });
    expect(Date.parse(a.cooling_until) - Date.now()).toBeGreaterThan(0);
    expect(Date.parse(a.cooling_until) - Date.now()).toBeLessThanOrEqual(1_000);
    expect(b).toMatchObject({ state: 'healthy', cooling_until: null });
    const catalog = (await r.admin('GET', '/v1/ai/models')).json.items.find((m: Json) => m.id === id);
    expect(catalog.route.targets[0]).toMatchObject({ state: 'cooling' });

    // While a cools down, requests go straight to b.
    r.reset();
    const skipped = await chat(id);
    expect(skipped.status).toBe(200);
    expect(r.calls()).toEqual(['b']);

    await sleep(1_050);
    r.reset();
    expect((await chat(id)).json.model).toBe('compat/a');
    expect(r.calls()).toEqual(['a']);
    expect((await targetsOf(id))[0]).toMatchObject({ state: 'healthy', cooling_until: null });
  });

  it('answers 503 with Retry-After while every target cools down, calling none', async () => {
    const id = `cold${++n}`;
    await r.upsert({
      id,
      strategy: 'fallback',
      targets: [{ model: 'compat/a' }],
      cooldown: { failures: 1, window_s: 60, cooldown_s: 30 },
    });
    r.script('a', failWith(500));
    expectApiError(await chat(id), 502, 'upstream_error');
    r.reset();
    const res = await chat(id);
    const error = expectApiError(res, 503, 'unavailable');
    expect(error.message).toContain('cooling down');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(25);
    expect(r.calls()).toEqual([]);
    expect(await r.usageOf(res.headers.get('x-request-id')!)).toEqual([]);
  });

  it('does not count failures of the request itself (a 400) against a target', async () => {
    const id = `blameless${++n}`;
    await r.upsert({
      id,
      strategy: 'fallback',
      targets: [{ model: 'compat/a' }, { model: 'compat/b' }],
      cooldown: { failures: 1, window_s: 60, cooldown_s: 30 },
    });
    r.script('a', failWith(400));
    expectApiError(await chat(id), 502, 'upstream_error');
    expect((await targetsOf(id))[0]).toMatchObject({ state: 'healthy', recent_failures: 0 });
  });
});
