import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type MockHandler,
  openAiDefault,
  openAiMock,
  openAiWire,
  sendJson,
  type WireMock,
} from '../support/mock-ai-upstreams.ts';
import { browserSkip, checkPage, openPage, PHONE, type WatchedPage } from './support/browser.ts';
import {
  alertText,
  consoleFixture,
  finishAtPhoneWidth,
  issueToken,
  openFromMenu,
  REQUEST_ID,
  signIn,
} from './support/fixture.ts';

// An admin connects an OpenAI-compatible upstream from the console, reads its models from the
// upstream's own list, updates it without retyping its key and removes it; the refusals of the API
// are shown as it words them.

const fx = consoleFixture(['acme']);
const KEY = 'sk-console-upstream-0123456789wxyz';

/**
 * An OpenAI-compatible server: `GET /v1/models` lists its models and chat completions echo, each
 * with `Authorization: Bearer <key>` or a 401 (per OpenAI's API reference: the models list and
 * authentication).
 */
const upstreamOf =
  (key: string): MockHandler =>
  (req, res) => {
    if (req.headers.authorization !== `Bearer ${key}`)
      return sendJson(res, 401, openAiWire.error('Incorrect API key provided.', 'invalid_request_error'));
    if (req.method === 'GET' && req.path === '/v1/models')
      return sendJson(res, 200, {
        object: 'list',
        data: [
          { id: 'llama-3.3-70b', object: 'model', created: 1_686_935_002, owned_by: 'team' },
          { id: 'nomic-embed-text', object: 'model', created: 1_686_935_002, owned_by: 'team' },
        ],
      });
    return openAiDefault(req, res);
  };

let upstream: WireMock;
beforeAll(async () => {
  upstream = await openAiMock();
});
beforeEach(() => {
  upstream.reset();
  upstream.reply(upstreamOf(KEY));
});
afterAll(async () => {
  await upstream?.close();
});

interface Listed {
  id: string;
  kind: string;
  preset: string | null;
  base_url: string;
  api_key: string | null;
  api_version?: string;
  headers: Record<string, string>;
  options?: Record<string, unknown>;
  discovered: boolean;
  models: { id: string; upstream_id: string; modalities: string[] }[];
}
const listed = async () =>
  (await fx.gw.api('GET', '/v1/ai/providers/list', { token: fx.gw.adminKey })).json.items as Listed[];
const connection = async (id: string) => (await listed()).find((item) => item.id === id);
const catalogIds = async () =>
  (await fx.gw.api('GET', '/v1/ai/models', { token: fx.gw.adminKey })).json.items.map(
    (model: { id: string }) => model.id,
  ) as string[];

const connectForm = (page: Page) => page.getByRole('form', { name: 'Connect a provider' });

async function openProviders(watched: WatchedPage): Promise<void> {
  await signIn(watched, fx.gw, fx.gw.adminKey);
  await openFromMenu(watched, 'Providers');
}

describe.skipIf(browserSkip !== undefined)('console: providers', () => {
  it('connects an upstream with discovery, lists it masked, updates it keeping the key, removes it after a confirmation', async () => {
    const { secret: userToken } = await issueToken(fx.gw, 'acme', { name: 'calls' });
    const watched = await openPage(fx.browser);
    const { page } = watched;
    await openProviders(watched);
    const empty = page.getByText('No provider connections yet.');
    await empty.waitFor();
    await checkPage(watched, 'providers-empty');

    // A new connection: an OpenAI-compatible server, its key, its models read from its list.
    const form = connectForm(page);
    expect(await form.getByLabel('Service').inputValue()).toBe('kind:openai_compatible');
    await form.getByLabel(/^Id/).fill('team-llm');
    await form.getByLabel(/^Base URL/).fill(`${upstream.url}/v1`);
    await form.getByLabel(/^API key/).fill(KEY);
    await form.getByLabel(/Discover the upstream's models/).check();
    await form.getByRole('button', { name: 'Connect', exact: true }).click();
    const row = page.getByRole('row', { name: /team-llm/ });
    await row.getByText('discovered').waitFor();
    expect(upstream.requests.map((r) => `${r.method} ${r.path} ${r.headers.authorization}`)).toEqual([
      `GET /v1/models Bearer ${KEY}`,
    ]);
    const text = (await row.textContent()) ?? '';
    expect(text).toContain('OpenAI-compatible server');
    expect(text).toContain(`${upstream.url}/v1`);
    expect(text).toContain('••••wxyz');
    expect(text).toContain('2 models');
    expect(await page.content()).not.toContain(KEY);
    expect(await form.getByLabel(/^API key/).inputValue()).toBe('');
    await row.getByText('2 models').click();
    await row.getByText('team-llm/llama-3.3-70b').waitFor();
    expect(await row.getByText('team-llm/nomic-embed-text').textContent()).toBe('team-llm/nomic-embed-text');
    expect(await row.textContent()).toContain('(embeddings)');
    expect(await connection('team-llm')).toMatchObject({
      kind: 'openai_compatible',
      preset: null,
      api_key: '••••wxyz',
      discovered: true,
    });
    await checkPage(watched, 'providers');

    // Its models are in the catalog the Models page shows.
    await openFromMenu(watched, 'Models');
    await page
      .getByRole('row', { name: /team-llm\/llama-3\.3-70b/ })
      .getByText('available')
      .waitFor();
    await openFromMenu(watched, 'Providers');

    // An update starts from the connection; the key left empty stays, as the form says.
    await row.getByRole('button', { name: 'Edit team-llm' }).click();
    const update = page.getByRole('form', { name: 'Update team-llm' });
    expect(await update.getByLabel(/^Id/).inputValue()).toBe('team-llm');
    expect(await update.getByLabel(/^API key/).inputValue()).toBe('');
    await update.getByText('(left empty, ••••wxyz stays)').waitFor();
    expect(await update.getByLabel(/Discover the upstream's models/).isChecked()).toBe(true);
    await update.getByLabel(/^Models/).fill('fast=llama-3.3-70b');
    await update.getByLabel(/^Headers/).fill('X-Team: blue');
    upstream.reset();
    upstream.reply(upstreamOf(KEY));
    await update.getByRole('button', { name: 'Update connection' }).click();
    await row.getByText('3 models').waitFor();
    await connectForm(page).waitFor();
    expect(await row.textContent()).toContain('Headers: X-Team');
    expect(upstream.requests.map((r) => `${r.method} ${r.path} ${r.headers.authorization}`)).toEqual([
      `GET /v1/models Bearer ${KEY}`,
    ]);
    expect(await connection('team-llm')).toMatchObject({
      api_key: '••••wxyz',
      headers: { 'X-Team': '••••' },
    });

    // A call through the gateway still carries the key (and now the header).
    const called = await fx.gw.api('POST', '/v1/ai/chat/completions', {
      token: userToken,
      body: { model: 'team-llm/fast', messages: [{ role: 'user', content: 'hello' }] },
    });
    expect(called.status, called.text).toBe(200);
    expect(called.json.choices[0].message.content).toBe('Echo: hello');
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent.headers['x-team']).toBe('blue');
    expect(upstream.body().model).toBe('llama-3.3-70b');

    // Removed after a confirmation: gone from the list and from the catalog.
    await row.getByRole('button', { name: 'Remove team-llm' }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove connection team-llm?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await connection('team-llm')).toBeDefined();
    await row.getByRole('button', { name: 'Remove team-llm' }).click();
    await dialog.getByRole('button', { name: 'Remove connection' }).click();
    await row.waitFor({ state: 'detached' });
    await empty.waitFor();
    expect(await connection('team-llm')).toBeUndefined();
    expect((await catalogIds()).filter((id) => id.startsWith('team-llm/'))).toEqual([]);
    watched.expectNoProblems();
    await watched.context.close();
  });

  it("shows the API's refusal of a bad input with its request id, the form kept as typed", async () => {
    const watched = await openPage(fx.browser);
    watched.allowStatuses(400);
    const { page } = watched;
    await openProviders(watched);
    const form = connectForm(page);
    await form.getByLabel(/^Id/).fill('edge');
    await form.getByLabel(/^Base URL/).fill(`${upstream.url}/v1`);
    await form.getByLabel(/^Models/).fill('m');
    await form.getByLabel(/^Headers/).fill('Host: elsewhere.example');
    await form.getByRole('button', { name: 'Connect', exact: true }).click();
    const text = await alertText(watched);
    expect(text).toContain('headers: Host is set by the gateway itself');
    expect(text).toContain('validation_failed');
    expect(text).toMatch(REQUEST_ID);
    expect(await form.getByLabel(/^Id/).inputValue()).toBe('edge');
    expect(await connection('edge')).toBeUndefined();

    // Neither models nor discovery: the API says what it needs.
    await form.getByLabel(/^Headers/).fill('');
    await form.getByLabel(/^Models/).fill('');
    await form.getByRole('button', { name: 'Connect', exact: true }).click();
    await page.getByRole('alert').getByText('discover: true').waitFor();
    expect(upstream.requests).toEqual([]);
    expect(await connection('edge')).toBeUndefined();
    watched.expectNoProblems();
    await watched.context.close();
  });

  it("shows each kind's own fields: Azure's API version and auth, a preset's optional URL", async () => {
    const watched = await openPage(fx.browser);
    const { page } = watched;
    await openProviders(watched);
    const form = connectForm(page);
    await form.getByLabel('Service').selectOption('kind:azure_openai');
    expect(await form.getByLabel(/Discover the upstream's models/).count()).toBe(0);
    await form.getByLabel(/^Id/).fill('azure-eu');
    await form.getByLabel(/^Base URL/).fill('https://team.openai.azure.example');
    await form.getByLabel(/^API key/).fill('azure-key-00001234');
    await form.getByLabel(/^API version/).fill('2025-01-01-preview');
    await form.getByLabel('Key sent as').selectOption('bearer');
    await form.getByLabel(/^Models/).fill('gpt-4o=gpt-4o-prod');
    await form.getByRole('button', { name: 'Connect', exact: true }).click();
    const row = page.getByRole('row', { name: /azure-eu/ });
    await row.getByText('sent as a bearer token').waitFor();
    expect(await connection('azure-eu')).toMatchObject({
      kind: 'azure_openai',
      api_version: '2025-01-01-preview',
      options: { auth: 'bearer' },
      models: [{ id: 'azure-eu/gpt-4o', upstream_id: 'gpt-4o-prod' }],
    });

    // Its update starts from what it has.
    await row.getByRole('button', { name: 'Edit azure-eu' }).click();
    const update = page.getByRole('form', { name: 'Update azure-eu' });
    expect(await update.getByLabel(/^API version/).inputValue()).toBe('2025-01-01-preview');
    expect(await update.getByLabel('Key sent as').inputValue()).toBe('bearer');
    expect(await update.getByLabel(/^Models/).inputValue()).toBe('gpt-4o=gpt-4o-prod');
    await update.getByRole('button', { name: 'Cancel update' }).click();

    // A preset: its base URL is optional, the preset's own when left empty.
    await form.getByLabel('Service').selectOption('preset:groq');
    expect(await form.getByLabel(/^Base URL/).getAttribute('required')).toBeNull();
    expect(await form.getByLabel(/^API version/).count()).toBe(0);
    await form.getByLabel(/^Id/).fill('groq-eu');
    await form.getByLabel(/^API key/).fill('gsk-console-5678');
    await form.getByLabel(/^Models/).fill('llama');
    await form.getByRole('button', { name: 'Connect', exact: true }).click();
    await page
      .getByRole('row', { name: /groq-eu/ })
      .getByText('Groq (preset)')
      .waitFor();
    expect(await connection('groq-eu')).toMatchObject({
      kind: 'openai_compatible',
      preset: 'groq',
      base_url: 'https://api.groq.com/openai/v1',
    });
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('fits a phone, with the fields of a Bedrock connection', async () => {
    const watched = await openPage(fx.browser, { viewport: PHONE });
    const { page } = watched;
    await openProviders(watched);
    const form = connectForm(page);
    await form.getByLabel('Service').selectOption('kind:bedrock');
    expect(await form.getByLabel('AWS region').getAttribute('required')).not.toBeNull();
    await form.getByLabel(/^Id/).fill('bedrock-us');
    await form.getByLabel('AWS region').fill('us-east-1');
    await form.getByLabel(/^Access key id/).fill('AKIAEXAMPLE00000001');
    await form.getByLabel('Secret access key').fill('aws-secret-console-abcd');
    await form.getByLabel(/^Models/).fill('haiku=anthropic.claude-3-haiku-20240307-v1:0');
    await form.getByRole('button', { name: 'Connect', exact: true }).click();
    const row = page.getByRole('row', { name: /bedrock-us/ });
    await row.getByText('AKIAEXAMPLE00000001').waitFor();
    expect(await page.content()).not.toContain('aws-secret-console-abcd');
    expect(await connection('bedrock-us')).toMatchObject({
      kind: 'bedrock',
      base_url: 'https://bedrock-runtime.us-east-1.amazonaws.com',
      options: { region: 'us-east-1', access_key_id: 'AKIAEXAMPLE00000001', secret_access_key: '••••abcd' },
    });
    await finishAtPhoneWidth(watched, 'providers-phone');
  });
});
