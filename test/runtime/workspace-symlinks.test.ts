import { execFileSync } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devProvider } from '../../services/ai/providers/dev/provider.ts';
import { startTestStack, type TestStack } from '../support/runtime.ts';

let stack: TestStack;
/** A folder outside the workspace and outside the data dir: nothing may ever land here. */
let outside: string;
/** The runtime's data dir; the workspace is its `workspace` folder. */
let dataDir: string;

beforeAll(async () => {
  stack = await startTestStack({ gateway: { ai: { providers: () => [devProvider] } } });
  outside = await mkdtemp(join(tmpdir(), 'studio-outside-'));
  dataDir = dirname(stack.workspace);
  await mkdir(stack.workspace, { recursive: true });
});
afterAll(async () => {
  await stack?.close();
  if (outside) await rm(outside, { recursive: true, force: true });
});

const exists = (path: string) =>
  lstat(path).then(
    () => true,
    () => false,
  );

const write = (path: string, content = 'pwned') => stack.call('POST', '/api/files/write', { path, content });
const action = (actionName: string, payload: unknown) =>
  stack.call('POST', '/api/plugins/action', { pluginName: 'files', actionName, payload });

function expectOutside(res: { status: number; text: string; json: { error: { code: string } } }) {
  expect(res.status, res.text).toBe(403);
  expect(res.json.error.code).toBe('path_outside_workspace');
}

describe('writes never follow a link out of the workspace', () => {
  it('a dangling link whose target outside does not exist yet', async () => {
    await symlink(join(outside, 'created.txt'), join(stack.workspace, 'dangling'));
    expectOutside(await write('dangling'));
    expect(await exists(join(outside, 'created.txt'))).toBe(false);
  });

  it('a chain of links, the last one dangling outside', async () => {
    await symlink('chain-2', join(stack.workspace, 'chain-1'));
    await symlink(join(outside, 'chained.txt'), join(stack.workspace, 'chain-2'));
    expectOutside(await write('chain-1'));
    expect(await exists(join(outside, 'chained.txt'))).toBe(false);
  });

  it('a chain of relative links that climbs out with ..', async () => {
    await mkdir(join(stack.workspace, 'deep'), { recursive: true });
    await symlink('../climb-2', join(stack.workspace, 'deep', 'climb-1'));
    await symlink('../climbed.txt', join(stack.workspace, 'climb-2'));
    expectOutside(await write('deep/climb-1'));
    expect(await exists(join(dataDir, 'climbed.txt'))).toBe(false);
  });

  it('a linked folder whose target outside does not exist: 403, not 502', async () => {
    await symlink(join(outside, 'missing-folder'), join(stack.workspace, 'linked-missing'));
    expectOutside(await write('linked-missing/x.txt'));
    expectOutside(await write('linked-missing/deeper/x.txt'));
    expect(await readdir(outside)).toEqual([]);
  });

  it('a link to <data dir>/mcp.json cannot plant an MCP config', async () => {
    await symlink('../mcp.json', join(stack.workspace, 'relative-mcp'));
    await symlink(join(dataDir, 'mcp.json'), join(stack.workspace, 'absolute-mcp'));
    const config = JSON.stringify({ servers: { evil: { command: 'touch', args: ['/tmp/owned'] } } });
    expectOutside(await write('relative-mcp', config));
    expectOutside(await action('write', { path: 'absolute-mcp', content: config }));
    expect(await exists(join(dataDir, 'mcp.json'))).toBe(false);
  });

  it('a FIFO is refused at once, neither written nor waited on', async () => {
    execFileSync('mkfifo', [join(stack.workspace, 'pipe')]);
    const written = await write('pipe');
    expect(written.status, written.text).toBe(409);
    const read = await action('read', { path: 'pipe' });
    expect(read.status, read.text).toBe(404);
  });

  it('a loop of links is a 400, not a 502', async () => {
    await symlink('loop-b', join(stack.workspace, 'loop-a'));
    await symlink('loop-a', join(stack.workspace, 'loop-b'));
    const res = await write('loop-a');
    expect(res.status, res.text).toBe(400);
    expect(res.json.error.code).toBe('validation_failed');
  });
});

describe('reads and lists never follow a link out of the workspace', () => {
  beforeAll(async () => {
    await writeFile(join(outside, 'secret.txt'), 'secret');
    await symlink(join(outside, 'secret.txt'), join(stack.workspace, 'secret-link'));
    await symlink(outside, join(stack.workspace, 'outside-folder'));
  });

  it('read of a link to a file outside', async () => {
    const res = await action('read', { path: 'secret-link' });
    expectOutside(res);
    expect(res.text).not.toContain('"secret"');
  });

  it('read through a linked folder outside', async () => {
    expectOutside(await action('read', { path: 'outside-folder/secret.txt' }));
  });

  it('list of a linked folder outside', async () => {
    const res = await action('list', { path: 'outside-folder' });
    expectOutside(res);
    expect(res.text).not.toContain('secret.txt');
  });

  it('a missing file or folder is a 404', async () => {
    for (const res of [
      await action('read', { path: 'nowhere.txt' }),
      await action('read', { path: 'no-folder/nowhere.txt' }),
      await action('list', { path: 'no-folder' }),
    ]) {
      expect(res.status, res.text).toBe(404);
      expect(res.json.error.code).toBe('not_found');
    }
  });
});

describe('links that stay inside the workspace work', () => {
  beforeAll(async () => {
    await mkdir(join(stack.workspace, 'real'), { recursive: true });
    await writeFile(join(stack.workspace, 'real', 'file.txt'), 'inside');
    await symlink('real', join(stack.workspace, 'alias'));
    await symlink(join(stack.workspace, 'real', 'file.txt'), join(stack.workspace, 'absolute-alias'));
    await symlink('../real/file.txt', join(stack.workspace, 'real', 'self'));
  });

  it('read through a linked folder, an absolute link and a link with ..', async () => {
    for (const path of ['alias/file.txt', 'absolute-alias', 'real/self', 'alias/self']) {
      const res = await action('read', { path });
      expect(res.status, `${path}: ${res.text}`).toBe(200);
      expect(res.json.result.content).toBe('inside');
    }
  });

  it('write through a linked folder lands in its target', async () => {
    const res = await write('alias/sub/new.txt', 'hello');
    expect(res.status, res.text).toBe(200);
    expect(await readFile(join(stack.workspace, 'real', 'sub', 'new.txt'), 'utf8')).toBe('hello');
  });

  it('write to a dangling link inside creates its target', async () => {
    await symlink('real/later.txt', join(stack.workspace, 'later'));
    expect((await write('later', 'later')).status).toBe(200);
    expect(await readFile(join(stack.workspace, 'real', 'later.txt'), 'utf8')).toBe('later');
  });

  it('write under a linked folder whose target inside is missing creates that folder', async () => {
    await symlink('made-by-link', join(stack.workspace, 'linked-inside-missing'));
    const res = await write('linked-inside-missing/x.txt', 'x');
    expect(res.status, res.text).toBe(200);
    expect(await readFile(join(stack.workspace, 'made-by-link', 'x.txt'), 'utf8')).toBe('x');
  });

  it('list of a linked folder inside', async () => {
    const res = await action('list', { path: 'alias' });
    expect(res.status, res.text).toBe(200);
    expect(res.json.result.entries).toContainEqual({
      name: 'file.txt',
      type: 'file',
      path: 'alias/file.txt',
    });
  });
});

describe('attachments are never written through a link out of the workspace', () => {
  const attachment = { type: 'document', fileName: 'notes.md', contentType: 'text/markdown', content: 'x' };
  const newSession = async () =>
    (await stack.runtime.sessions.create({ kind: 'dashboard', title: 't', model: 'dev/echo', system: '' }))
      .session.id;
  const execute = (sessionId: string) =>
    stack.call('POST', `/api/dashboard/sessions/${sessionId}/execute`, {
      instructions: 'x',
      attachments: [attachment],
    });

  it("a session's attachment folder that is a link out", async () => {
    const sessionId = await newSession();
    await mkdir(join(stack.workspace, 'attachments'), { recursive: true });
    await symlink(join(outside, 'session-folder'), join(stack.workspace, 'attachments', sessionId));
    expectOutside(await execute(sessionId));
    expect(await exists(join(outside, 'session-folder'))).toBe(false);
  });

  it('the attachments folder that is a link out', async () => {
    await rm(join(stack.workspace, 'attachments'), { recursive: true, force: true });
    await mkdir(join(outside, 'all-attachments'));
    await symlink(join(outside, 'all-attachments'), join(stack.workspace, 'attachments'));
    expectOutside(await execute(await newSession()));
    expect(await readdir(join(outside, 'all-attachments'))).toEqual([]);
  });

  it('an attachments folder linked inside still works', async () => {
    await rm(join(stack.workspace, 'attachments'));
    await symlink('real', join(stack.workspace, 'attachments'));
    const sessionId = await newSession();
    const res = await execute(sessionId);
    expect(res.status, res.text).toBe(200);
    expect(await readdir(join(stack.workspace, 'real', sessionId))).toEqual([
      expect.stringMatching(/-notes\.md$/),
    ]);
  });
});
