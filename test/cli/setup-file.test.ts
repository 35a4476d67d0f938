import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { exportSetup } from '../../services/setup/export.ts';
import { readSetupFile } from '../../services/setup/file.ts';
import { type AdminApi, applyChanges, planSetup } from '../../services/setup/plan.ts';
import { adminOk } from '../support/admin.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { openAiMock, sendJson } from '../support/mock-ai-upstreams.ts';
import { studio } from '../support/studio-cli.ts';

// `studio apply -f studio.yaml`: a file of providers, prices, routes and studios brought onto a
// running gateway through its admin API; applied twice it changes nothing; `studio export` writes a
// file that applies as nothing.

const KEY = 'sk-team-llm-0123456789abcdef';
const FILE = `
providers:
  - id: team-llm
    preset: ollama
    api_key: \${TEAM_LLM_KEY}
    models:
      - id: fast
        upstream_id: llama3.1
prices:
  team-llm/fast: { input_per_mtok: 0.5, output_per_mtok: 1.5 }
routes:
  - id: team/chat
    strategy: fallback
    targets: [{ model: team-llm/fast }, { model: dev/echo }]
studios:
  - id: acme
    name: Acme
    cache_ttl_s: 60
    tokens: [{ name: ci, models: ['dev/*'] }]
    budgets: [{ amount_usd: 100, window: month, mode: hard }]
    limits: { rpm: 600, tpm: 100000 }
`;

let gw: TestGateway;
let dir: string;
const api = (): AdminApi => ({
  get: async (path) => (await adminOk(gw, 'GET', path)).json,
  post: async (path, body) => (await adminOk(gw, 'POST', path, body)).json,
});

beforeAll(async () => {
  gw = await startTestGateway({ store: 'memory', logLevel: 'silent' });
  dir = await mkdtemp(join(tmpdir(), 'studio-setup-'));
});
afterAll(async () => {
  await gw?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('a setup file', () => {
  it('is applied as admin calls, then again as nothing; its export applies as nothing', async () => {
    const file = readSetupFile(FILE, { TEAM_LLM_KEY: KEY });
    const planned = await planSetup(file, api());
    expect(planned.map((change) => change.what)).toEqual([
      'connect provider team-llm',
      'set the price of team-llm/fast',
      'create route team/chat',
      'create studio acme',
      'issue token ci of studio acme',
      'set the budget of studio acme',
      'set the limits of studio acme',
    ]);
    const secrets = await applyChanges(planned, api());
    expect(secrets).toEqual([
      { what: 'issue token ci of studio acme', secret: expect.stringMatching(/^stk_/) },
    ]);

    expect(await planSetup(file, api())).toEqual([]);
    const exported = await exportSetup(api());
    expect(JSON.stringify(exported)).not.toContain(KEY);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a setup file names an environment variable as ${NAME}
    expect(exported.providers[0]).toMatchObject({ id: 'team-llm', api_key: '${TEAM_LLM_API_KEY}' });
    const again = readSetupFile(JSON.stringify(exported), { TEAM_LLM_API_KEY: KEY });
    expect(await planSetup(again, api())).toEqual([]);
  });

  it('a change in the file is the one call it needs', async () => {
    const file = readSetupFile(FILE.replace('rpm: 600', 'rpm: 300'), { TEAM_LLM_KEY: KEY });
    expect((await planSetup(file, api())).map((change) => change.what)).toEqual([
      'set the limits of studio acme',
    ]);
  });

  it('env, connection headers and options, discovered models, per-token budgets and limits, and accounts round-trip', async () => {
    const upstream = await openAiMock();
    upstream.reply((req, res) =>
      req.path === '/v1/models'
        ? sendJson(res, 200, { object: 'list', data: [{ id: 'qwen2.5' }, { id: 'bge-embed' }] })
        : sendJson(res, 404, { error: { message: req.path } }),
    );
    try {
      const more = `
env:
  - { key: SEARCH_API_KEY, value: '\${SEARCH_KEY}' }
  - { key: REGION_NAME, value: eu-west, secret: false }
providers:
  - id: lab
    kind: openai_compatible
    base_url: ${upstream.url}/v1
    headers: { X-Org: '\${LAB_ORG}' }
    discover: true
    models: [{ id: qwen2.5, max_output_tokens: 4096 }]
  - id: aws
    kind: bedrock
    options: { region: eu-central-1, access_key_id: AKIDEXAMPLE12345, secret_access_key: '\${AWS_SECRET}' }
    models: [{ id: claude, upstream_id: anthropic.claude-3-5-sonnet-20240620-v1:0 }]
studios:
  - id: initech
    tokens:
      - name: batch
        budget: { amount_usd: 5, window: day, mode: hard }
        limits: { rpm: 10 }
    accounts: [{ email: peter@initech.example, name: Peter, password: '\${PETER_PASSWORD}' }]
`;
      const env = {
        SEARCH_KEY: 'search-secret-0123456789',
        LAB_ORG: 'org-lab-secret-0123456',
        AWS_SECRET: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
        PETER_PASSWORD: 'correct horse battery staple',
      };
      const file = readSetupFile(more, env);
      const planned = await planSetup(file, api());
      expect(planned.map((change) => change.what)).toEqual([
        'set env SEARCH_API_KEY',
        'set env REGION_NAME',
        'connect provider lab',
        'connect provider aws',
        'create studio initech',
        'issue token batch of studio initech',
        'set the budget of token batch of studio initech',
        'set the limits of token batch of studio initech',
        'create account peter@initech.example in studio initech',
      ]);
      await applyChanges(planned, api());
      expect(await planSetup(file, api())).toEqual([]);

      const [batch] = (await adminOk(gw, 'GET', '/v1/studios/tokens/list?studio_id=initech')).json.items;
      const budgets = (await adminOk(gw, 'GET', '/v1/studios/budgets/list?studio_id=initech')).json.items;
      expect(budgets).toEqual([
        expect.objectContaining({ token_id: batch.id, amount_usd: 5, window: 'day' }),
      ]);
      const lab = (await adminOk(gw, 'GET', '/v1/ai/providers/list')).json.items.find(
        (p: { id: string }) => p.id === 'lab',
      );
      expect(lab.models.map((m: { id: string }) => m.id)).toEqual(['lab/qwen2.5', 'lab/bge-embed']);

      const exported = await exportSetup(api());
      const text = JSON.stringify(exported);
      for (const secret of Object.values(env)) expect(text).not.toContain(secret);
      expect(exported.env).toEqual(
        expect.arrayContaining([
          // biome-ignore lint/suspicious/noTemplateCurlyInString: a setup file names an environment variable as ${NAME}
          { key: 'SEARCH_API_KEY', value: '${SEARCH_API_KEY}' },
          { key: 'REGION_NAME', value: 'eu-west', secret: false },
        ]),
      );
      expect(exported.providers.find((p) => p.id === 'aws')).toMatchObject({
        options: {
          region: 'eu-central-1',
          access_key_id: 'AKIDEXAMPLE12345',
          // biome-ignore lint/suspicious/noTemplateCurlyInString: a setup file names an environment variable as ${NAME}
          secret_access_key: '${AWS_SECRET_ACCESS_KEY}',
        },
      });
      const again = readSetupFile(JSON.stringify(exported), {
        TEAM_LLM_API_KEY: KEY,
        SEARCH_API_KEY: env.SEARCH_KEY,
        LAB_X_ORG: env.LAB_ORG,
        AWS_SECRET_ACCESS_KEY: env.AWS_SECRET,
      });
      expect(await planSetup(again, api())).toEqual([]);
    } finally {
      await upstream.close();
    }
  });

  it('names the environment variables it lacks, and the field that is wrong', () => {
    expect(() => readSetupFile(FILE, {})).toThrow('environment variables that are not set: TEAM_LLM_KEY');
    expect(() => readSetupFile('studios: [{ id: x, colour: red }]', {})).toThrow(/studios\.0/);
  });

  it('studio apply --dry-run prints the calls and makes none; studio export writes the state', async () => {
    const path = join(dir, 'studio.yaml');
    await writeFile(path, FILE.replace('id: acme', 'id: globex').replace('name: Acme', 'name: Globex'));
    const env = { ADMIN_SECRET_KEY: gw.adminKey, TEAM_LLM_KEY: KEY, STUDIO_DATA_DIR: dir };
    const dry = studio(['apply', '-f', path, '--dry-run', '--url', gw.url], env);
    expect(await dry.exited).toBe(0);
    expect(dry.stdout()).toContain('would create studio globex');
    expect(
      (await adminOk(gw, 'GET', '/v1/studios/list')).json.items.map((s: { id: string }) => s.id),
    ).not.toContain('globex');
    const applied = studio(['apply', '-f', path, '--url', gw.url], env);
    expect(await applied.exited).toBe(0);
    expect(applied.stdout()).toMatch(/issue token ci of studio globex: stk_\S+ {2}\(shown once/);
    const exported = studio(['export', '--url', gw.url], env);
    expect(await exported.exited).toBe(0);
    expect((parse(exported.stdout()) as { studios: { id: string }[] }).studios.map((s) => s.id)).toContain(
      'globex',
    );
  }, 60_000);
});
