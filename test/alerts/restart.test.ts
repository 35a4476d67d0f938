import { afterAll, beforeAll, expect, it } from 'vitest';
import { waitUntil } from '../../shared/testing/wait.ts';
import { adminOk, studioWithToken } from '../support/admin.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { chat, detectorCaughtUp, priceEcho, type Receiver, readmeVerify, startReceiver } from './support.ts';

// The gateway restarted while a delivery waits to be tried again: what was pending is delivered by
// the next process, and nothing delivered is delivered again (SQLite: the log and checkpoints survive).

let gw: TestGateway;
let receiver: Receiver;
let secret: string;
let token: string;

beforeAll(async () => {
  // A minute before the second attempt: the restart comes first.
  gw = await startTestGateway({ store: 'sqlite', processEnv: { STUDIO_ALERTS_RETRY_MS: '60000' } });
  receiver = await startReceiver();
  receiver.answers = [500];
  ({ token } = await studioWithToken(gw, 'acme'));
  await priceEcho(gw);
  secret = (await adminOk(gw, 'POST', '/v1/alerts/webhooks/upsert', { id: 'ops', url: receiver.url })).json
    .secret;
  await adminOk(gw, 'POST', '/v1/studios/budgets/set', {
    studio_id: 'acme',
    amount_usd: 1,
    window: 'month',
    mode: 'soft',
  });
});
afterAll(async () => {
  await gw?.close();
  await receiver?.close();
});

const alerts = async () =>
  (
    (await adminOk(gw, 'GET', '/v1/alerts?studio_id=acme')).json.items as {
      id: string;
      data: { threshold: number };
    }[]
  )
    .slice()
    .reverse();
const deliveries = async () =>
  (await adminOk(gw, 'GET', '/v1/alerts/deliveries?webhook_id=ops')).json.items as {
    event_id: string;
    attempt: number;
    status: number;
  }[];
const answeredOk = (eventId: string) =>
  receiver.received.filter((r) => r.headers['x-studio-event-id'] === eventId && r.status === 200).length;

it('delivers after a restart what was pending, and nothing twice once delivered', async () => {
  // $0.90 of $1: 50 % and 80 % at once
  expect(await chat(gw, token)).toBe(200);
  await waitUntil(async () => (await alerts()).length === 2, 'two alerts are raised');
  const [fifty, eighty] = await alerts();
  expect([fifty!.data.threshold, eighty!.data.threshold]).toEqual([50, 80]);
  await waitUntil(async () => (await deliveries()).length === 1, 'the first attempt is recorded');
  expect(receiver.received.map((r) => r.status)).toEqual([500]);

  await gw.restart();
  await waitUntil(() => answeredOk(fifty!.id) === 1 && answeredOk(eighty!.id) === 1, 'both are delivered');
  // The receiver counts an answer before the dispatcher records it and the read model shows it.
  await waitUntil(async () => (await deliveries()).length === 3, 'both attempts are recorded');
  const attempts = (await deliveries()).reverse().map((a) => [a.event_id, a.attempt, a.status]);
  expect(attempts).toEqual([
    [fifty!.id, 1, 500],
    [fifty!.id, 2, 200],
    [eighty!.id, 1, 200],
  ]);

  // Another restart, then one more alert: it is delivered, and the two before are not again.
  await gw.restart();
  expect(await chat(gw, token)).toBe(200);
  await waitUntil(async () => (await alerts()).length === 3, 'the 100 % alert is raised');
  const hundred = (await alerts())[2]!;
  expect(hundred.data.threshold).toBe(100);
  await waitUntil(() => answeredOk(hundred.id) === 1, 'it is delivered');
  await waitUntil(async () => (await deliveries()).length === 4, 'its attempt is recorded');
  await waitUntil(await detectorCaughtUp(gw), 'the detector has read the log');
  expect(receiver.received.map((r) => [r.headers['x-studio-event-id'], r.status])).toEqual([
    [fifty!.id, 500],
    [fifty!.id, 200],
    [eighty!.id, 200],
    [hundred.id, 200],
  ]);
  expect((await alerts()).map((a) => a.data.threshold)).toEqual([50, 80, 100]);
  const verify = readmeVerify();
  for (const r of receiver.received) expect(verify(secret, r.headers, r.body)).toBe(true);
  const list = (await adminOk(gw, 'GET', '/v1/alerts/webhooks/list')).json.items;
  expect(list[0].last_delivery).toMatchObject({
    event_id: hundred.id,
    state: 'delivered',
    attempts: 1,
    status: 200,
  });
});
