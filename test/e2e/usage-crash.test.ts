import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../shared/testing/wait.ts';
import { type ServerProcess, startStudio } from '../scale/processes.ts';
import { adminOk } from '../support/admin.ts';
import { auditData } from '../support/audit.ts';

// Nothing answered goes unrecorded: the gateway on SQLite, killed with SIGKILL while clients are
// generating (chat completions JSON and streamed, text, text as SSE), restarted, several times over.
// Every generation whose answer a client received whole (the JSON parsed, `[DONE]` or the `done`
// frame seen) must have its GenerationCompleted event, under the request id the client sent. The
// studio has a hard budget: each generation's reservation is in the log ahead of its event, and
// after the crashes the budget holds exactly what the log leaves open.

const CYCLES = 5;
const CLIENTS = 6;

const KINDS = ['chat', 'chat-stream', 'text', 'text-stream'] as const;
type Kind = (typeof KINDS)[number];

const PROMPT = 'one two three';

function requestOf(kind: Kind): { path: string; body: unknown } {
  const messages = [{ role: 'user', content: PROMPT }];
  switch (kind) {
    case 'chat':
      return { path: '/v1/ai/chat/completions', body: { model: 'dev/echo', messages } };
    case 'chat-stream':
      return { path: '/v1/ai/chat/completions', body: { model: 'dev/echo', messages, stream: true } };
    case 'text':
      return { path: '/v1/ai/text', body: { model: 'dev/echo', prompt: PROMPT } };
    case 'text-stream':
      return { path: '/v1/ai/stream', body: { model: 'dev/echo', prompt: PROMPT } };
  }
}

/** Whether `text` is a whole answer of its kind: the body the client acts on, complete. */
function whole(kind: Kind, text: string): boolean {
  switch (kind) {
    case 'chat': {
      const parsed = JSON.parse(text) as { choices: { message: { content: string } }[] };
      return parsed.choices[0]!.message.content === `Echo: ${PROMPT}`;
    }
    case 'chat-stream':
      return /\ndata: \[DONE\]\n\n$/.test(`\n${text}`);
    case 'text':
      return (JSON.parse(text) as { parts: { text: string }[] }).parts[0]!.text === `Echo: ${PROMPT}`;
    case 'text-stream':
      return /event: done\ndata: \{.*\}\n\n$/.test(text);
  }
}

/** One client: generates, kind after kind, until the gateway stops answering; notes each whole answer. */
async function generatingClient(url: string, token: string, label: string, whole_: Map<string, Kind>) {
  try {
    for (let n = 0; ; n++) {
      const kind = KINDS[n % KINDS.length]!;
      const requestId = `${label}-${n}-${kind}`;
      const { path, body } = requestOf(kind);
      const res = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'x-request-id': requestId,
        },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`${kind} answered ${res.status}: ${text}`);
      if (whole(kind, text)) whole_.set(requestId, kind);
    }
  } catch (error) {
    // The gateway was killed: a request in flight fails (or its body ends short), and this client is done.
    if (!(error instanceof TypeError || error instanceof SyntaxError)) throw error;
  }
}

describe('generations answered whole while the gateway is killed with SIGKILL', () => {
  let dataDir: string | undefined;
  let studio: ServerProcess | undefined;
  afterAll(async () => {
    studio?.kill('SIGKILL');
    await studio?.exited;
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it(`are all in the log after ${CYCLES} crashes`, { timeout: 120_000 }, async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'studio-usage-crash-'));
    const adminKey = `adm_${randomBytes(32).toString('base64url')}`;
    const env = {
      STUDIO_DATA_DIR: dataDir,
      ADMIN_SECRET_KEY: adminKey,
      STUDIO_MASTER_KEY: randomBytes(32).toString('hex'),
    };
    const start = () => startStudio(['gateway', 'start', '--port', '0'], env);
    studio = await start();

    const gateway = { url: studio.url('Studio gateway'), adminKey };
    await adminOk(gateway, 'POST', '/v1/studios/create', { name: 'Acme', studio_id: 'acme' });
    const token = (await adminOk(gateway, 'POST', '/v1/studios/tokens/apply', { studio_id: 'acme' })).json
      .user_token as string;
    const budget = { studio_id: 'acme', amount_usd: 1_000, window: 'total', mode: 'hard' };
    await adminOk(gateway, 'POST', '/v1/studios/budgets/set', budget);

    const answered = new Map<string, Kind>();
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const url = studio.url('Studio gateway');
      const before = answered.size;
      const load = Array.from({ length: CLIENTS }, (_, client) =>
        generatingClient(url, token, `c${cycle}-w${client}`, answered),
      );
      // Killed after a varying number of whole answers, with every client's next request in flight.
      await waitUntil(() => answered.size >= before + 20 + ((cycle * 7) % 13), 'whole answers', 20_000);
      const killed = studio;
      killed.kill('SIGKILL');
      await Promise.all([...load, killed.exited]);
      studio = await start();
    }

    const url = studio.url('Studio gateway');
    const events = await auditData<{
      requestId: string;
      reservationId?: string;
      reservedMicroUsd?: number;
      expiresAt?: string;
    }>(url, adminKey, 'BudgetReserved,GenerationCompleted');
    const completed = events.filter((data) => data.expiresAt === undefined);
    const recorded = completed.map((data) => data.requestId);
    const inLog = new Set(recorded);
    expect([...answered.keys()].filter((id) => !inLog.has(id))).toEqual([]);
    // each generation once, however its append went
    expect(recorded.length).toBe(inLog.size);
    // every kind of answer was among those checked
    expect(new Set(answered.values())).toEqual(new Set(KINDS));

    // each generation reserved: its event records its reservation, or that was written before it
    const reservedBefore = new Set<string>();
    const unreserved: string[] = [];
    for (const data of events) {
      if (data.expiresAt !== undefined) reservedBefore.add(data.reservationId!);
      else if (
        data.reservationId === undefined ||
        (data.reservedMicroUsd === undefined && !reservedBefore.has(data.reservationId))
      )
        unreserved.push(data.requestId);
    }
    expect(unreserved).toEqual([]);
    // the budget holds what the log leaves open: no reservation of a dead process beyond those
    const settling = await auditData<{ reservationId?: string; amountMicroUsd?: number; expiresAt?: string }>(
      url,
      adminKey,
      'BudgetReserved,GenerationCompleted,GenerationFailed,BudgetReleased',
    );
    const open = new Map<string, number>();
    for (const data of settling) {
      if (data.expiresAt !== undefined) open.set(data.reservationId!, data.amountMicroUsd!);
      else if (data.reservationId !== undefined) open.delete(data.reservationId);
    }
    const [standing] = (await adminOk({ url, adminKey }, 'GET', '/v1/studios/budgets/list?studio_id=acme'))
      .json.items as { reserved_usd: number; spent_usd: number }[];
    const openUsd = [...open.values()].reduce((sum, amount) => sum + amount, 0) / 1_000_000;
    expect(standing!.reserved_usd).toBeCloseTo(openUsd, 6);
    expect(standing!.spent_usd).toBeGreaterThan(0);
  });
});
