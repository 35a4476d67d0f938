import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../shared/testing/wait.ts';
import { type ServerProcess, startStudio } from '../scale/processes.ts';
import { adminOk } from '../support/admin.ts';
import { auditData } from '../support/audit.ts';
import { processState } from '../support/process-state.ts';

// Studio on SQLite, killed with SIGKILL in the middle of a load of admin commands and restarted at
// once (as a supervisor does), many times over: no acknowledged command may be lost, and a restart
// is never refused because of the process just killed, though that one is still a zombie.

const CYCLES = 20;
const CLIENTS = 4;

interface Acknowledged {
  /** Studio id → name, for every create answered 201. */
  created: Map<string, string>;
  /** Every studio whose pause was answered 200. */
  paused: Set<string>;
}

/** One admin client: creates a studio and pauses it, again and again, until the gateway stops answering. */
async function adminClient(url: string, adminKey: string, label: string, acknowledged: Acknowledged) {
  const gateway = { url, adminKey };
  try {
    for (let n = 0; ; n++) {
      const name = `${label}-${n}`;
      const { id } = (await adminOk(gateway, 'POST', '/v1/studios/create', { name })).json as { id: string };
      acknowledged.created.set(id, name);
      await adminOk(gateway, 'POST', '/v1/studios/pause', { studio_id: id, reason: 'crash test' });
      acknowledged.paused.add(id);
    }
  } catch (error) {
    // The gateway was killed: a request in flight fails without an answer, and this client is done.
    if (!(error instanceof TypeError)) throw error;
  }
}

describe('Studio on SQLite killed with SIGKILL under load and restarted at once', () => {
  let dataDir: string | undefined;
  let studio: ServerProcess | undefined;
  afterAll(async () => {
    studio?.kill('SIGKILL');
    studio?.child.kill('SIGKILL');
    await studio?.exited;
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it(`keeps every acknowledged command across ${CYCLES} crashes`, { timeout: 600_000 }, async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'studio-crash-'));
    const adminKey = `adm_${randomBytes(32).toString('base64url')}`;
    const env = {
      STUDIO_DATA_DIR: dataDir,
      ADMIN_SECRET_KEY: adminKey,
      STUDIO_MASTER_KEY: randomBytes(32).toString('hex'),
    };
    const start = () => startStudio(['gateway', 'start', '--port', '0'], env, { unreapedAfterDeath: true });
    const acknowledged: Acknowledged = { created: new Map(), paused: new Set() };

    studio = await start();
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const url = studio.url('Studio gateway');
      const before = acknowledged.created.size + acknowledged.paused.size;
      const load = Array.from({ length: CLIENTS }, (_, client) =>
        adminClient(url, adminKey, `c${cycle}-w${client}`, acknowledged),
      );
      // Killed after a varying number of acknowledgements, with every client's next request in flight.
      const target = before + 4 + ((cycle * 7) % 13);
      await waitUntil(
        () => acknowledged.created.size + acknowledged.paused.size >= target,
        'acknowledgements',
      );
      const killed = studio;
      killed.kill('SIGKILL');
      studio = await start(); // at once, while the killed process is not reaped
      if (process.platform === 'linux') expect(await processState(killed.pid)).toBe('Z');
      killed.child.kill('SIGKILL'); // its parent gone, the zombie is reaped
      await Promise.all([...load, killed.exited]);
    }

    const url = studio.url('Studio gateway');
    const created = new Set(
      (await auditData<{ studioId: string }>(url, adminKey, 'StudioCreated')).map((d) => d.studioId),
    );
    const paused = new Set(
      (await auditData<{ studioId: string }>(url, adminKey, 'StudioPaused')).map((d) => d.studioId),
    );
    expect([...acknowledged.created.keys()].filter((id) => !created.has(id))).toEqual([]);
    expect([...acknowledged.paused].filter((id) => !paused.has(id))).toEqual([]);

    // The read model, rebuilt from its snapshot and the log after each crash, agrees.
    const list = await fetch(`${url}/v1/studios/list`, { headers: { authorization: `Bearer ${adminKey}` } });
    expect(list.status).toBe(200);
    const { items } = (await list.json()) as { items: { id: string; name: string; status: string }[] };
    const studios = new Map(items.map((s) => [s.id, s]));
    for (const [id, name] of acknowledged.created) {
      expect(studios.get(id)).toMatchObject({
        name,
        status: acknowledged.paused.has(id) ? 'paused' : expect.any(String),
      });
    }
    expect(acknowledged.created.size).toBeGreaterThanOrEqual(CYCLES * 2);
  });
});
