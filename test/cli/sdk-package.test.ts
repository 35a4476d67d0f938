import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/runtime.ts';

// The SDK alone, as a user installs it: `sdk/` packed as the package `studio-ai-gateway-sdk`,
// installed into an empty project (its dependencies from npm's cache, as `npm ci` left it), and
// used there against a running runtime, without any of the gateway's code.

const run = promisify(execFile);
const SDK = join(import.meta.dirname, '..', '..', 'sdk');

let stack: TestStack;
let project: string;

beforeAll(async () => {
  stack = await startTestStack();
  project = await mkdtemp(join(tmpdir(), 'studio-sdk-user-'));
  await run('npm', ['pack', '--pack-destination', project], { cwd: SDK });
  const [tarball] = (await readdir(project)).filter((file) => file.endsWith('.tgz'));
  await writeFile(
    join(project, 'package.json'),
    JSON.stringify({ name: 'user', private: true, type: 'module' }),
  );
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', `./${tarball}`], {
    cwd: project,
  });
}, 180_000);
afterAll(async () => {
  await stack?.close();
  if (project) await rm(project, { recursive: true, force: true });
});

describe('the SDK installed by itself', () => {
  it('holds the client and nothing of the server, and drives a session', async () => {
    const installed = (await readdir(join(project, 'node_modules'))).filter((name) => !name.startsWith('.'));
    expect(installed.sort()).toEqual(['eventsource-parser', 'studio-ai-gateway-sdk', 'zod']);
    await writeFile(
      join(project, 'use.mjs'),
      `import { RemoteAgent } from 'studio-ai-gateway-sdk';
const agent = new RemoteAgent({ baseUrl: process.argv[2] });
const session = await agent.create({ title: 'from a user project' });
const turn = await agent.prompt(session.id, { text: 'hello' });
console.log(JSON.stringify({ title: session.title, text: turn.message.parts[0].text }));
`,
    );
    const { stdout } = await run(process.execPath, ['use.mjs', stack.runtime.url], { cwd: project });
    expect(JSON.parse(stdout)).toEqual({ title: 'from a user project', text: 'Echo: hello' });
  });
});
