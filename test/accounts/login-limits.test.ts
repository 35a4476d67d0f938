import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { accountsDeps } from '../../services/accounts/deps.ts';
import { loginAction } from '../../services/accounts/login.ts';
import { SecretBox } from '../../shared/crypto.ts';
import { ApiError } from '../../shared/errors.ts';
import type { ActionContext } from '../../shared/http/action.ts';
import { waitUntil } from '../../shared/testing/wait.ts';
import { adminOk, createStudio } from '../support/admin.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { closeAgents, fromAddress } from './support/from-address.ts';

// How login attempts are counted and checked under load: counted before the password is checked,
// Argon2 verifications bounded, IPv6 keyed by /64. Argon2's verify is wrapped (not replaced) so
// the tests can count the verifications in flight and hold them at a gate, without timing.

const argon2 = vi.hoisted(() => ({
  inFlight: 0,
  peak: 0,
  calls: 0,
  gate: undefined as Promise<void> | undefined,
}));

vi.mock('@node-rs/argon2', async (importOriginal) => {
  const real = await importOriginal<typeof import('@node-rs/argon2')>();
  return {
    ...real,
    verify: async (...args: Parameters<typeof real.verify>) => {
      argon2.calls++;
      argon2.inFlight++;
      argon2.peak = Math.max(argon2.peak, argon2.inFlight);
      try {
        if (argon2.gate) await argon2.gate;
        return await real.verify(...args);
      } finally {
        argon2.inFlight--;
      }
    },
  };
});

let openGate = () => {};

/** Closes the gate: verifications wait at it until the returned function is called (or the test ends). */
function holdVerifications(): () => void {
  let open!: () => void;
  argon2.gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  argon2.calls = 0;
  argon2.peak = 0;
  openGate = () => {
    argon2.gate = undefined;
    open();
  };
  return openGate;
}

afterEach(() => openGate());

/** Argon2 verifications at once, and how many more may wait (services/accounts/passwords.ts). */
const ARGON2_SLOTS = 2;
const ARGON2_QUEUE = 16;

let gw: TestGateway;
const studio = 'limits-a';
const password = 'correct horse battery staple';
let address = 100;
const nextAddress = () => `127.0.0.${++address}`;

const login = (body: unknown, from: string) => fromAddress(from, `${gw.url}/v1/accounts/login`, body);

async function account(email: string) {
  await adminOk(gw, 'POST', '/v1/accounts/create', { studio_id: studio, email, password });
}

beforeAll(async () => {
  gw = await startTestGateway({ store: 'memory', logLevel: 'warn' });
  await createStudio(gw, studio);
  await account('ada@example.com');
  // The dummy hash is ready before any test holds verifications.
  expect((await login({ studio_id: studio, email: 'ada@example.com', password }, '127.0.0.1')).status).toBe(
    200,
  );
});

afterAll(async () => {
  await closeAgents();
  await gw?.close();
});

describe('attempts are counted before the password is checked', () => {
  it('200 parallel logins from one address, 199 wrong then the right one: the right one is refused, 5 checked', async () => {
    await account('target@example.com');
    const from = nextAddress();
    const open = holdVerifications();
    const answers: number[] = [];
    const wrong = Array.from({ length: 199 }, (_, i) =>
      login({ studio_id: studio, email: 'target@example.com', password: `guess-${i}` }, from).then((res) => {
        answers.push(res.status);
        return res;
      }),
    );
    // Everything past the account's budget of 5 is refused without waiting for a verification.
    await waitUntil(() => answers.length === 194, '194 answers are in', 10_000);
    expect(new Set(answers)).toEqual(new Set([429]));
    const right = await login({ studio_id: studio, email: 'target@example.com', password }, from);
    expect(right.status, right.text).toBe(429);
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(0);
    open();
    const statuses = (await Promise.all(wrong)).map((res) => res.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(194);
    expect(argon2.calls).toBe(5);
  });

  it('a right password gives its attempt back to the address', async () => {
    const from = nextAddress();
    // 19 right logins, each given back: the address could still try 20 wrong ones after them.
    for (let i = 0; i < 19; i++) {
      expect((await login({ studio_id: studio, email: 'ada@example.com', password }, from)).status).toBe(200);
    }
    for (let i = 0; i < 20; i++) {
      const res = await login({ studio_id: studio, email: `spray${i}@example.com`, password: 'x' }, from);
      expect(res.status).toBe(401);
    }
    expect((await login({ studio_id: studio, email: 'ada@example.com', password }, from)).status).toBe(429);
  });
});

describe('Argon2 verifications are bounded', () => {
  it(`60 parallel logins: at most ${ARGON2_SLOTS} verify at once, ${ARGON2_QUEUE} wait, the rest are a 503 at once`, async () => {
    const open = holdVerifications();
    const answers: number[] = [];
    const requests = [nextAddress(), nextAddress(), nextAddress()].flatMap((from) =>
      Array.from({ length: 20 }, (_, i) =>
        login({ studio_id: studio, email: `burst-${from}-${i}@example.com`, password: 'x' }, from).then(
          (res) => {
            answers.push(res.status);
            return res;
          },
        ),
      ),
    );
    const refused = 60 - ARGON2_SLOTS - ARGON2_QUEUE;
    await waitUntil(() => answers.length === refused, `${refused} answers are in`, 10_000);
    expect(argon2.inFlight).toBe(ARGON2_SLOTS);
    open();
    const all = await Promise.all(requests);
    expect(argon2.peak).toBe(ARGON2_SLOTS);
    const busy = all.filter((res) => res.status === 503);
    expect(busy).toHaveLength(refused);
    expect(all.filter((res) => res.status === 401)).toHaveLength(ARGON2_SLOTS + ARGON2_QUEUE);
    expect(busy[0]!.json.error.code).toBe('overloaded');
    expect(busy[0]!.headers.get('retry-after')).toBe('1');
    // A 503 was not an attempt: it was given back, and the address may still sign in.
    const from = `127.0.0.${address}`;
    expect((await login({ studio_id: studio, email: 'ada@example.com', password }, from)).status).toBe(200);
  });
});

describe('every "no" does the same work', () => {
  it('an unknown email and a wrong password: one decryption and one Argon2 verification each', async () => {
    await account('same-work@example.com');
    const decrypt = vi.spyOn(SecretBox.prototype, 'decrypt');
    const work = async (body: unknown) => {
      decrypt.mockClear();
      argon2.calls = 0;
      expect((await login(body, nextAddress())).status).toBe(401);
      return { decryptions: decrypt.mock.calls.length, verifications: argon2.calls };
    };
    try {
      const wrong = await work({ studio_id: studio, email: 'same-work@example.com', password: 'nope' });
      const unknown = await work({ studio_id: studio, email: 'nobody-at-all@example.com', password: 'nope' });
      const noStudio = await work({
        studio_id: 'no-such-studio',
        email: 'ada@example.com',
        password: 'nope',
      });
      expect(wrong).toEqual({ decryptions: 1, verifications: 1 });
      expect(unknown).toEqual(wrong);
      expect(noStudio).toEqual(wrong);
    } finally {
      decrypt.mockRestore();
    }
  });
});

describe('IPv6 clients are counted by their /64', () => {
  it('20 failures from addresses of one /64 refuse the whole /64, and no other', async () => {
    const login = loginAction(accountsDeps(gw.running.ctx));
    const from = (ip: string) =>
      ({
        req: { clientAddress: ip },
        metadata: { actor: 'guest' },
      }) as unknown as ActionContext;
    const attempt = async (ip: string, email: string) => {
      try {
        await login.handler({ studio_id: studio, email, password: 'x' }, from(ip));
        return 200;
      } catch (error) {
        if (error instanceof ApiError) return error.status;
        throw error;
      }
    };
    for (let i = 0; i < 20; i++) {
      expect(await attempt(`2001:db8:aa:bb::${(i + 1).toString(16)}`, `v6-${i}@example.com`)).toBe(401);
    }
    expect(await attempt('2001:db8:aa:bb:ffff:1:2:3', 'v6-next@example.com')).toBe(429);
    expect(await attempt('2001:db8:aa:bc::1', 'v6-next@example.com')).toBe(401);
  });
});
