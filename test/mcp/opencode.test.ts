import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify, stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findExecutable } from '../../shared/executables.ts';
import { adminOk, createStudio } from '../support/admin.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { notRunHere } from '../support/not-run-here.ts';
import { startToolServer, type ToolServer } from './support/tool-server.ts';

// A real agent client configured against the MCP gateway as its users configure it: OpenCode, with
// `/v1/mcp` as a remote MCP server in its project's opencode.json and a studio token as its bearer.
// `opencode mcp list` connects to every server it is given and says whether it could.

const OPENCODE = findExecutable('opencode');
const run = promisify(execFile);
const skip = OPENCODE ? undefined : 'OpenCode is not installed (npm install --global opencode-ai)';

let gw: TestGateway;
let tools: ToolServer;
let dir: string;

beforeAll(async () => {
  if (notRunHere('OpenCode against /v1/mcp', skip)) return;
  gw = await startTestGateway({ store: 'memory', logLevel: 'silent' });
  tools = await startToolServer();
  dir = await mkdtemp(join(tmpdir(), 'studio-opencode-'));
  await createStudio(gw, 'acme');
  await adminOk(gw, 'POST', '/v1/mcp/servers/upsert', { id: 'web', transport: 'http', url: tools.url });
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await tools?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** `opencode mcp list` in a project whose opencode.json names the gateway with `token`. */
async function mcpList(token: string): Promise<string> {
  await writeFile(
    join(dir, 'opencode.json'),
    JSON.stringify({
      $schema: 'https://opencode.ai/config.json',
      mcp: {
        studio: {
          type: 'remote',
          url: `${gw.url}/v1/mcp`,
          enabled: true,
          oauth: false,
          headers: { Authorization: `Bearer ${token}` },
        },
      },
    }),
  );
  // A home of its own: no user configuration, no credentials of this machine.
  const home = join(dir, 'home');
  const { stdout, stderr } = await run(OPENCODE!, ['mcp', 'list'], {
    cwd: dir,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      XDG_CONFIG_HOME: join(home, '.config'),
      OPENCODE_DISABLE_AUTOUPDATE: '1',
    },
    timeout: 60_000,
  });
  return stripVTControlCharacters(`${stdout}\n${stderr}`);
}

describe.skipIf(skip !== undefined)('OpenCode against /v1/mcp', () => {
  it('connects with a studio token, and fails with a bad one', async () => {
    const issued = await adminOk(gw, 'POST', '/v1/studios/tokens/apply', {
      studio_id: 'acme',
      name: 'opencode',
      tools: ['web__*'],
    });
    const connected = await mcpList(issued.json.user_token);
    expect(connected).toMatch(/✓ studio connected/);
    expect(connected).toContain(`${gw.url}/v1/mcp`);

    const refused = await mcpList('stk_not-a-token-of-this-gateway-0123456789abcde');
    expect(refused).toMatch(/✗ studio failed/);
    expect(refused).toContain('401');
  }, 120_000);
});
