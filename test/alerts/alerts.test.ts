import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../shared/testing/wait.ts';
import { adminOk, asAdmin, studioWithToken } from '../support/admin.ts';
import { expectApiError, startTestGateway, type TestGateway } from '../support/gateway.ts';
import {
  caughtUp,
  chat,
  detectorCaughtUp,
  priceEcho,
  type Receiver,
  readmeVerify,
  requestsRecorded,
  startReceiver,
} from './support.ts';

// Alerts decided from real generations, delivered signed to real HTTP receivers.

let gw: TestGateway;
let pager: Receiver;
let flaky: Receiver;
let pagerSecret: string;
const FLAKY_SECRET = 'flaky-receiver-secret-0123456789';
let tokenA: string;
let tokenIdA: string;
let tokenB: string;

interface Alert {
  id: string;
  type: string;
  studio_id: string;
  created_at: string;
  data: Record<string, unknown>;
}

const alertsOf = async (studioId: string): Promise<Alert[]> =>
  (await adminOk(gw, 'GET', `/v1/alerts?studio_id=${studioId}&limit=500`)).json.items;

beforeAll(async () => {
  gw = await startTestGateway({
    store: 'memory',
    processEnv: { STUDIO_ALERTS_RETRY_MS: '20', STUDIO_ALERTS_DELIVERY_ATTEMPTS: '4' },
  });
  pager = await startReceiver();
  flaky = await startReceiver();
  flaky.answers = [500, 503];
  ({ token: tokenA, tokenId: tokenIdA } = await studioWithToken(gw, 'acme'));
  ({ token: tokenB } = await studioWithToken(gw, 'globex'));
  await priceEcho(gw);
  const made = await adminOk(gw, 'POST', '/v1/alerts/webhooks/upsert', {
    id: 'pager',
    url: pager.url,
    studio_id: 'acme',
  });
  pagerSecret = made.json.secret;
  await adminOk(gw, 'POST', '/v1/alerts/webhooks/upsert', {
    id: 'flaky',
    url: flaky.url,
    secret: FLAKY_SECRET,
    events: ['budget_threshold'],
  });
  // Nothing listens there: every attempt fails to connect.
  await adminOk(gw, 'POST', '/v1/alerts/webhooks/upsert', {
    id: 'down',
    url: 'http://127.0.0.1:9/hook',
    studio_id: 'globex',
    events: ['error_rate'],
  });
});
afterAll(async () => {
  await gw?.close();
  await pager?.close();
  await flaky?.close();
});

describe('webhooks as data', () => {
  it('a secret left out is made and shown once; the list masks it', async () => {
    expect(pagerSecret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const list = (await adminOk(gw, 'GET', '/v1/alerts/webhooks/list')).json.items;
    const byId = new Map(list.map((w: { id: string }) => [w.id, w]));
    expect(byId.get('pager')).toMatchObject({
      id: 'pager',
      url: pager.url,
      secret: `••••${pagerSecret.slice(-4)}`,
      studio_id: 'acme',
      events: ['budget_threshold', 'error_rate'],
    });
    expect(byId.get('flaky')).toMatchObject({
      secret: '••••6789',
      studio_id: null,
      events: ['budget_threshold'],
    });
    expect(JSON.stringify(list)).not.toContain(pagerSecret);
    expect(JSON.stringify(list)).not.toContain(FLAKY_SECRET);
    // An update that leaves the secret out keeps it, and does not show it again.
    const again = await adminOk(gw, 'POST', '/v1/alerts/webhooks/upsert', {
      id: 'pager',
      url: pager.url,
      studio_id: 'acme',
    });
    expect(again.json.secret).toBe(`••••${pagerSecret.slice(-4)}`);
  });

  it('a URL at a cloud metadata address is refused; removing an unknown webhook is 404', async () => {
    const refused = await asAdmin(gw, 'POST', '/v1/alerts/webhooks/upsert', {
      id: 'metadata',
      url: 'http://169.254.169.254/latest',
    });
    expectApiError(refused, 400, 'validation_failed');
    expectApiError(await asAdmin(gw, 'POST', '/v1/alerts/webhooks/remove', { id: 'nope' }), 404, 'not_found');
    await adminOk(gw, 'POST', '/v1/alerts/webhooks/upsert', { id: 'gone', url: pager.url });
    expect((await adminOk(gw, 'POST', '/v1/alerts/webhooks/remove', { id: 'gone' })).json).toEqual({
      id: 'gone',
      removed: true,
    });
  });
});

describe('budget thresholds', () => {
  it("a studio's soft budget of $10 spent at $0.90 a generation: 50 %, 80 % and 100 %, each once; its token's $20 a month: 50 %", async () => {
    await adminOk(gw, 'POST', '/v1/studios/budgets/set', {
      studio_id: 'acme',
      amount_usd: 10,
      window: 'day',
      mode: 'soft',
    });
    await adminOk(gw, 'POST', '/v1/studios/budgets/set', {
      studio_id: 'acme',
      token_id: tokenIdA,
      amount_usd: 20,
      window: 'month',
      mode: 'soft',
    });
    for (let i = 0; i < 14; i++) expect(await chat(gw, tokenA)).toBe(200);
    await waitUntil(() => requestsRecorded(gw, 'acme', 14), 'the generations are recorded');
    await waitUntil(await detectorCaughtUp(gw), 'the detector has read them');
    const all = (await alertsOf('acme')).reverse();
    // the 12th generation ($10.80) crosses the studio's 100 % and the token's 50 %
    expect(all.map((a) => [a.type, a.data.threshold, a.data.tokenId])).toEqual([
      ['BudgetThresholdCrossed', 50, null],
      ['BudgetThresholdCrossed', 80, null],
      ['BudgetThresholdCrossed', 100, null],
      ['BudgetThresholdCrossed', 50, tokenIdA],
    ]);
    const token = all[3]!;
    expect(token.data).toMatchObject({ window: 'month', amountMicroUsd: 20_000_000 });
    expect(token.data.spentMicroUsd).toBeGreaterThanOrEqual(10_000_000);
    expect(token.data.windowKey).toMatch(/^month:\d{4}-\d{2}$/);
    const alerts = all.slice(0, 3);
    const day = new Date().toISOString().slice(0, 10);
    alerts.forEach((alert, i) => {
      expect(alert.studio_id).toBe('acme');
      expect(alert.data).toMatchObject({
        studioId: 'acme',
        tokenId: null,
        window: 'day',
        amountMicroUsd: 10_000_000,
      });
      expect(alert.data.windowKey).toMatch(/^day:\d{4}-\d{2}-\d{2}$/);
      expect([day, new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)]).toContain(
        String(alert.data.windowKey).slice(4),
      );
      // The window's spend when the crossing was found: at least the threshold, at most all 14 generations.
      const threshold = [5_000_000, 8_000_000, 10_000_000][i]!;
      expect(alert.data.spentMicroUsd).toBeGreaterThanOrEqual(threshold);
      expect(alert.data.spentMicroUsd).toBeLessThanOrEqual(14 * 900_000);
    });
  });

  it('each alert is delivered once to the studio webhook, signed as the README says', async () => {
    const alerts = await alertsOf('acme');
    await waitUntil(() => pager.received.length >= 4, 'the pager received the four alerts');
    const verify = readmeVerify();
    expect(pager.received).toHaveLength(4);
    for (const { headers, body } of pager.received) {
      expect(headers['content-type']).toBe('application/json');
      expect(verify(pagerSecret, headers, body)).toBe(true);
      expect(verify('another secret of the same length...', headers, body)).toBe(false);
      expect(verify(pagerSecret, headers, body.replace('acme', 'acmf'))).toBe(false);
      const payload = JSON.parse(body);
      expect(Object.keys(payload).sort()).toEqual(['created_at', 'data', 'id', 'type']);
      expect(headers['x-studio-event-id']).toBe(payload.id);
      expect(Math.abs(Number(headers['x-studio-timestamp']) - Date.now() / 1000)).toBeLessThan(120);
      const alert = alerts.find((a) => a.id === payload.id)!;
      expect(payload).toEqual({
        id: alert.id,
        type: alert.type,
        created_at: alert.created_at,
        data: alert.data,
      });
    }
    expect(new Set(pager.received.map((r) => r.headers['x-studio-event-id'])).size).toBe(4);
  });

  it('a receiver failing twice, then answering: three attempts recorded, one delivery', async () => {
    const first = (await alertsOf('acme')).at(-1)!;
    // flaky answered the first two attempts with 500 and 503 (set before any alert was raised)
    await waitUntil(
      async () =>
        (await adminOk(gw, 'GET', '/v1/alerts/webhooks/list')).json.items.find(
          (w: { id: string }) => w.id === 'flaky',
        )?.last_delivery?.state === 'delivered' && flaky.received.length >= 6,
      'flaky has every alert delivered',
    );
    const attempts = (await adminOk(gw, 'GET', '/v1/alerts/deliveries?webhook_id=flaky')).json.items;
    const ofFirst = attempts.filter((a: { event_id: string }) => a.event_id === first.id).reverse();
    expect(ofFirst.map((a: { attempt: number; status: number }) => [a.attempt, a.status])).toEqual([
      [1, 500],
      [2, 503],
      [3, 200],
    ]);
    for (const a of ofFirst) {
      expect(a.webhook_id).toBe('flaky');
      expect(a.error).toBeNull();
      expect(a.latency_ms).toBeGreaterThanOrEqual(0);
    }
    const verify = readmeVerify();
    const answered = flaky.received.filter((r) => r.status === 200);
    expect(answered.map((r) => r.headers['x-studio-event-id']).sort()).toEqual(
      (await alertsOf('acme')).map((a) => a.id).sort(),
    );
    for (const r of flaky.received) expect(verify(FLAKY_SECRET, r.headers, r.body)).toBe(true);
    // the same event id, and the same body, on every attempt
    const ofFirstReceived = flaky.received.filter((r) => r.headers['x-studio-event-id'] === first.id);
    expect(ofFirstReceived.map((r) => r.status)).toEqual([500, 503, 200]);
    expect(new Set(ofFirstReceived.map((r) => r.body)).size).toBe(1);
  });
});

describe('error rate', () => {
  it('failures (rate-limit refusals) above the threshold over min_requests: one alert for the window', async () => {
    await adminOk(gw, 'POST', '/v1/studios/limits/set', { studio_id: 'globex', rpm: 2 });
    const set = await adminOk(gw, 'POST', '/v1/alerts/error-rate/set', {
      studio_id: 'globex',
      threshold: 0.5,
      window_minutes: 1440,
      min_requests: 4,
    });
    expect(set.json).toMatchObject({
      studio_id: 'globex',
      threshold: 0.5,
      window_minutes: 1440,
      min_requests: 4,
    });
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push(await chat(gw, tokenB));
    expect(statuses).toEqual([200, 200, 429, 429, 429, 429, 429]);
    await waitUntil(() => requestsRecorded(gw, 'globex', 7), 'the requests are recorded');
    await waitUntil(await detectorCaughtUp(gw), 'the detector has read them');
    const alerts = await alertsOf('globex');
    expect(alerts).toHaveLength(1);
    const day = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
    expect(alerts[0]).toMatchObject({ type: 'ErrorRateExceeded', studio_id: 'globex' });
    // 2 answered then 3 refused: 3 failures of 5 requests, 0.6 > 0.5 (at 4 requests, 0.5 is not above it)
    expect(alerts[0]!.data).toEqual({
      studioId: 'globex',
      rate: 0.6,
      requests: 5,
      failures: 3,
      windowStart: expect.any(String),
      windowEnd: expect.any(String),
    });
    const start = Date.parse(String(alerts[0]!.data.windowStart));
    expect([day, day - 86_400_000]).toContain(start);
    expect(Date.parse(String(alerts[0]!.data.windowEnd)) - start).toBe(86_400_000);
  });

  it('goes to the webhooks of every studio subscribed to it, not to another studio’s', async () => {
    // pager is acme's; flaky is subscribed to budget thresholds only
    const [alert] = await alertsOf('globex');
    await waitUntil(await caughtUp(gw, 'alerts-delivery'), 'the dispatcher has read it');
    expect(pager.received.some((r) => r.headers['x-studio-event-id'] === alert!.id)).toBe(false);
    expect(flaky.received.some((r) => r.headers['x-studio-event-id'] === alert!.id)).toBe(false);
  });
});

describe('giving up', () => {
  it('a receiver never reached: STUDIO_ALERTS_DELIVERY_ATTEMPTS attempts recorded, then given up', async () => {
    const [alert] = await alertsOf('globex');
    const down = async () =>
      (await adminOk(gw, 'GET', '/v1/alerts/webhooks/list')).json.items.find(
        (w: { id: string }) => w.id === 'down',
      );
    await waitUntil(async () => (await down())?.last_delivery?.state === 'gave_up', 'down is given up');
    expect((await down()).last_delivery).toMatchObject({ event_id: alert!.id, attempts: 4, status: null });
    const attempts = (await adminOk(gw, 'GET', '/v1/alerts/deliveries?webhook_id=down')).json.items;
    expect(attempts.map((a: { attempt: number }) => a.attempt)).toEqual([4, 3, 2, 1]);
    for (const a of attempts) {
      expect(a.status).toBeNull();
      expect(a.error).toMatch(/ECONNREFUSED|could not reach/);
    }
  });
});

describe('who sees which alerts', () => {
  it("a user sees its own studio's alerts, never another's", async () => {
    const own = await gw.api('GET', '/v1/alerts', { token: tokenB });
    expect(own.status).toBe(200);
    expect(own.json.items.map((a: Alert) => a.studio_id)).toEqual(['globex']);
    expectApiError(
      await gw.api('GET', '/v1/alerts?studio_id=acme', { token: tokenB }),
      403,
      'studio_mismatch',
    );
    const a = await gw.api('GET', '/v1/alerts?limit=2', { token: tokenA });
    expect(a.json.items.map((x: Alert) => [x.studio_id, x.data.threshold, x.data.tokenId])).toEqual([
      ['acme', 50, tokenIdA],
      ['acme', 100, null],
    ]);
    // the admin sees every studio's, newest first
    const all = (await adminOk(gw, 'GET', '/v1/alerts')).json.items as Alert[];
    expect(all.map((x) => x.type)).toEqual([
      'ErrorRateExceeded',
      'BudgetThresholdCrossed',
      'BudgetThresholdCrossed',
      'BudgetThresholdCrossed',
      'BudgetThresholdCrossed',
    ]);
    expectApiError(await gw.api('GET', '/v1/alerts/deliveries', { token: tokenA }), 403, 'forbidden');
  });

  it('no secret reaches the log or the log lines', async () => {
    const events = JSON.stringify((await adminOk(gw, 'GET', '/v1/audit/events?limit=1000')).json);
    expect(events).toContain('WebhookDelivered');
    expect(events).not.toContain(pagerSecret);
    expect(events).not.toContain(FLAKY_SECRET);
    const lines = gw.logs.join('\n');
    expect(lines).toContain('/v1/alerts/webhooks/upsert');
    expect(lines).not.toContain(pagerSecret);
    expect(lines).not.toContain(FLAKY_SECRET);
  });
});
