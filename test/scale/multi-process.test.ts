import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../shared/testing/wait.ts';
import { adminOk, asAdmin } from '../support/admin.ts';
import { freshPostgresDatabase, postgresUnavailableReason } from '../support/postgres.ts';
import { type ServerProcess, startStudio } from './processes.ts';

// Several Studio processes on one PostgreSQL database (docs/deploy.md).
const database = await freshPostgresDatabase();
const adminKey = `adm_${randomBytes(24).toString('base64url')}`;
const env = () => ({
  STUDIO_EVENT_STORE: 'postgres',
  DATABASE_URL: database!.url,
  ADMIN_SECRET_KEY: adminKey,
  STUDIO_MASTER_KEY: masterKey,
  STUDIO_GATEWAY_PORT: '0',
  STUDIO_RUNTIME_PORT: '0',
});
const masterKey = randomBytes(32).toString('hex');

const processes: ServerProcess[] = [];
async function studio(args: string[], extra: Record<string, string> = {}) {
  const p = await startStudio(args, { ...env(), ...extra });
  processes.push(p);
  return p;
}
/** A gateway process as admin requests reach it. */
const gatewayAt = (p: ServerProcess) => ({ url: p.url('Studio gateway'), adminKey });

describe.skipIf(database === undefined)(
  `several processes on one PostgreSQL ${database ? '' : `(not run: ${postgresUnavailableReason})`}`,
  { timeout: 120_000 },
  () => {
    let a: ServerProcess;
    let b: ServerProcess;

    beforeAll(async () => {
      [a, b] = await Promise.all([studio(['gateway', 'start']), studio(['gateway', 'start'])]);
    });
    afterAll(async () => {
      for (const p of processes) p.kill('SIGKILL');
      await Promise.all(processes.map((p) => p.exited));
      await database?.drop();
    });

    it('a token issued through gateway A authenticates on gateway B within one second', async () => {
      await adminOk(gatewayAt(a), 'POST', '/v1/studios/create', { name: 'Scale', studio_id: 'scale' });
      const issued = (await adminOk(gatewayAt(a), 'POST', '/v1/studios/tokens/apply', { studio_id: 'scale' }))
        .json as { user_token: string };
      const authenticatesOnB = async () =>
        (
          await fetch(`${b.url('Studio gateway')}/v1/services`, {
            headers: { authorization: `Bearer ${issued.user_token}` },
          })
        ).status === 200;
      await waitUntil(authenticatesOnB, 'gateway B authenticates the token', 1_000);
    });

    it('a session event appended through one runtime reaches an SSE subscriber connected to another', async () => {
      const token = (await adminOk(gatewayAt(a), 'POST', '/v1/studios/tokens/apply', { studio_id: 'scale' }))
        .json.user_token as string;
      const runtimeEnv = (gateway: ServerProcess) => ({
        STUDIO_GATEWAY_URL: gateway.url('Studio gateway'),
        STUDIO_TOKEN: token,
      });
      const [ra, rb] = await Promise.all([
        studio(['agent', 'start', '--http'], runtimeEnv(a)),
        studio(['agent', 'start', '--http'], runtimeEnv(b)),
      ]);
      const created = (await (
        await fetch(`${ra.url('Agent runtime')}/api/sdk/sessions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        })
      ).json()) as { id: string };

      // Runtime B learns of the session from the log, then tails it.
      let sse: Response | undefined;
      for (let i = 0; i < 100; i++) {
        sse = await fetch(`${rb.url('Agent runtime')}/api/sdk/sessions/${created.id}/events`);
        if (sse.status === 200) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(sse?.status).toBe(200);
      const reader = sse!.body!.getReader();
      const prompt = fetch(`${ra.url('Agent runtime')}/api/sdk/sessions/${created.id}/prompt`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'across processes' }),
      });
      let text = '';
      const decoder = new TextDecoder();
      while (!text.includes('event: TurnCompleted')) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      await reader.cancel();
      expect((await prompt).status).toBe(200);
      expect(text).toContain('event: TurnQueued');
      expect(text).toContain('Echo: across processes');
    });

    it('kill -9 during a load of commands: every acknowledged command is in the log and the read models converge', async () => {
      const acknowledged: string[] = [];
      const targets = [a, b];
      let killed = false;
      const load = Array.from({ length: 4 }, async (_, worker) => {
        for (let i = 0; i < 40; i++) {
          const target = targets[(worker + i) % 2]!;
          const id = `load-${worker}-${i}`;
          if (worker === 0 && i === 10 && !killed) {
            killed = true;
            a.kill('SIGKILL');
          }
          try {
            const res = await asAdmin(gatewayAt(target), 'POST', '/v1/studios/create', {
              name: id,
              studio_id: id,
            });
            if (res.status === 201) acknowledged.push(id);
          } catch {
            // the killed process: no answer, no acknowledgement
          }
        }
      });
      await Promise.all(load);
      expect(await a.exited).not.toBe(0);
      expect(acknowledged.length).toBeGreaterThan(40);

      // Every acknowledged command is in the log…
      const events: { data: { studioId: string } }[] = [];
      let after = 0;
      for (;;) {
        const page = (
          await adminOk(gatewayAt(b), 'GET', `/v1/audit/events?type=StudioCreated&limit=1000&after=${after}`)
        ).json as {
          items: { data: { studioId: string } }[];
          next_after: number | null;
        };
        events.push(...page.items);
        if (page.next_after === null) break;
        after = page.next_after;
      }
      const logged = new Set(events.map((e) => e.data.studioId));
      for (const id of acknowledged) expect(logged.has(id), id).toBe(true);

      // …and a fresh process, and the survivor, hold the same read model as the log.
      const c = await studio(['gateway', 'start']);
      const list = async (p: ServerProcess) =>
        (
          (await adminOk(gatewayAt(p), 'GET', '/v1/studios/list')).json as {
            items: { id: string }[];
          }
        ).items
          .map((s) => s.id)
          .sort();
      const fromLog = [...logged].sort();
      expect(await list(c)).toEqual(fromLog);
      expect(await list(b)).toEqual(fromLog);
    });

    it('one sealer among the processes: the log is sealed as one unbroken chain, also across the kill -9', async () => {
      type Report = { ok: boolean; unsealed: number; seals_checked: number; events_checked: number };
      const verify = async () => (await adminOk(gatewayAt(b), 'GET', '/v1/audit/verify')).json as Report;
      let report = await verify();
      // Whoever leads now seals what was written; a process that took over from a killed leader
      // waits for its advisory lock to be free (a retry every 2 s).
      for (const deadline = Date.now() + 30_000; report.unsealed > 0 && Date.now() < deadline; ) {
        await new Promise((r) => setTimeout(r, 200));
        report = await verify();
      }
      expect(report).toMatchObject({ ok: true, unsealed: 0, breaks: 0 });
      expect(report.seals_checked).toBeGreaterThan(0);
      expect(report.events_checked).toBeGreaterThan(40);
    });
  },
);
