import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devProvider } from '../../services/ai/providers/dev/provider.ts';
import { waitUntil } from '../../shared/testing/wait.ts';
import { startTestStack, type TestStack } from '../support/runtime.ts';
import {
  browserSkip,
  checkPage,
  launchBrowser,
  openPage,
  PHONE,
  screenshot,
  seriousViolations,
} from './support/browser.ts';
import { cuttableProxy } from './support/runtime-cut-proxy.ts';
import { pacedModel } from './support/runtime-paced-model.ts';

const paced = pacedModel();
let stack: TestStack;
let browser: Browser;

beforeAll(async () => {
  stack = await startTestStack({ gateway: { ai: { providers: () => [devProvider, paced.provider] } } });
  // Priced before any turn: the runtime reads the prices when a turn's first call ends and keeps
  // them a while, so a price set between two tests could meet the list it read before.
  const priced = await stack.gw.api('POST', '/v1/ai/prices/upsert', {
    token: stack.gw.adminKey,
    body: { model: 'dev/echo', input_per_mtok: 3, output_per_mtok: 7 },
  });
  expect(priced.status).toBe(200);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

interface SessionJson {
  id: string;
  revision: number;
  status: 'idle' | 'busy';
  forked_from: { session_id: string; revision: number } | null;
}
interface HistoryJson {
  type: string;
  data: Record<string, unknown>;
  revision: number;
}

const api = {
  create: async (body: { title?: string; model?: string }) =>
    (await stack.call('POST', '/api/sdk/sessions', body)).json as SessionJson,
  get: async (id: string) => (await stack.call('GET', `/api/sdk/sessions/${id}`)).json as SessionJson,
  history: async (id: string) =>
    (await stack.call('GET', `/api/sdk/sessions/${id}/history?limit=1000`)).json.items as HistoryJson[],
  messages: async (id: string) =>
    (await stack.call('GET', `/api/sdk/sessions/${id}/messages`)).json.items as {
      role: string;
      parts: { type: string; text?: string }[];
    }[],
  prompt: (id: string, text: string) => stack.call('POST', `/api/sdk/sessions/${id}/prompt`, { text }),
};

async function untilIdle(id: string): Promise<void> {
  await waitUntil(async () => (await api.get(id)).status !== 'busy', `session ${id} is idle`, 4_000);
}

async function openSession(page: Page, id: string): Promise<void> {
  await page.goto(`${stack.runtime.url}/#/sessions/${id}`);
  await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
}

const transcript = (page: Page) => page.getByRole('region', { name: 'Transcript' });

describe.skipIf(browserSkip !== undefined)('runtime console: sessions', () => {
  it('creates a session, and shows the answer typed as it is generated, then stored', async () => {
    const watched = await openPage(browser);
    const { page } = watched;
    await page.goto(`${stack.runtime.url}/`);
    await page.getByRole('link', { name: 'Sessions' }).click();
    await page.getByLabel('Title').fill('Typing');
    await page.getByLabel(/^Model/).fill('test/paced');
    await page.getByRole('button', { name: 'Create session' }).click();
    await page.getByRole('heading', { name: 'Typing', level: 1 }).waitFor();
    const id = /#\/sessions\/([^/]+)$/.exec(page.url())?.[1] as string;
    expect(await api.get(id)).toMatchObject({ id, status: 'idle' });
    await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();

    const release = paced.hold();
    await page.getByLabel(/^Message/).fill('slow words here');
    await page.getByLabel(/^Message/).press('Control+Enter');
    // Two words arrive as deltas and the model holds: the page shows them while the turn runs.
    const typing = transcript(page).getByLabel('Being written');
    await typing.filter({ hasText: 'Echo: slow' }).waitFor();
    expect(await api.get(id)).toMatchObject({ status: 'busy' });
    const stored = await api.messages(id);
    expect(stored.at(-1)).toMatchObject({ role: 'assistant', parts: [] }); // deltas are never stored
    await checkPage(watched, 'runtime-session-typing');

    release();
    // The deltas may spell the whole answer before the stored part arrives: the stored part then
    // replaces them, and the answer stays.
    await typing.waitFor({ state: 'detached' });
    await transcript(page).getByText('Echo: slow words here', { exact: true }).waitFor();
    await untilIdle(id);
    expect((await api.messages(id)).at(-1)?.parts).toMatchObject([
      { type: 'text', text: 'Echo: slow words here' },
    ]);
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('picks the transcript up again after a reload in the middle of a turn', async () => {
    const { id } = await api.create({ title: 'Reload', model: 'test/paced' });
    const watched = await openPage(browser);
    const { page } = watched;
    await openSession(page, id);
    const release = paced.hold();
    await page.getByLabel(/^Message/).fill('survive a reload');
    await page.getByRole('button', { name: 'Send' }).click();
    await transcript(page).getByLabel('Being written').filter({ hasText: 'Echo: survive' }).waitFor();

    await page.reload();
    await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
    // Stored events are folded again; the turn is still running, the user's words are there.
    const turn = page.getByRole('article', { name: 'Turn 1' });
    await turn.getByText('survive a reload', { exact: true }).waitFor();
    expect(await turn.getAttribute('aria-busy')).toBe('true');
    release();
    await turn.getByText('Echo: survive a reload', { exact: true }).waitFor();
    await turn.getByText('completed').waitFor();
    await untilIdle(id);
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('recovers a dropped stream: resumes after the last revision it saw, retrying past failed attempts', async () => {
    const { id } = await api.create({ title: 'Cut', model: 'dev/echo' });
    await api.prompt(id, 'before the cut');
    const proxy = await cuttableProxy(stack.runtime.url);
    const watched = await openPage(browser);
    const { page } = watched;
    try {
      await page.goto(`${proxy.url}/#/sessions/${id}`);
      await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
      await transcript(page).getByText('Echo: before the cut').waitFor();
      const seen = (await api.get(id)).revision;

      // Attempts to reconnect fail for a while; the connection open now is broken.
      let refused = 0;
      let allow = false;
      await page.route('**/api/sdk/sessions/*/events', async (route) => {
        if (!allow) {
          refused++;
          return route.abort('connectionreset');
        }
        await route.fallback();
      });
      proxy.cut();
      await page.getByRole('status').filter({ hasText: 'Reconnecting…' }).waitFor();
      // What happens meanwhile is only in the log.
      expect((await api.prompt(id, 'while cut off')).status).toBe(200);
      await waitUntil(() => refused >= 2, 'two refused reconnections');

      const resumed = page.waitForRequest((request) => request.url().endsWith('/events'));
      allow = true;
      expect((await resumed).headers()['last-event-id']).toBe(String(seen));
      await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
      await transcript(page).getByText('Echo: while cut off').waitFor();
      expect(await transcript(page).getByText('Echo: before the cut').count()).toBe(1); // nothing twice
      // The failures were provoked: the broken stream and the refused attempts (the browser names no URL).
      const provoked = /\/events |ERR_INCOMPLETE_CHUNKED_ENCODING|ERR_CONNECTION_RESET/;
      expect(watched.problems.filter((p) => !provoked.test(p))).toEqual([]);
    } finally {
      await watched.context.close();
      await proxy.close();
    }
  });

  it('queues prompts and shows each one its place, as the prompt route answered it', async () => {
    const { id } = await api.create({ title: 'Queue', model: 'test/paced' });
    const watched = await openPage(browser);
    const { page } = watched;
    await openSession(page, id);
    const release = paced.hold();
    const positions: number[] = [];
    page.on('response', async (response) => {
      if (response.url().endsWith('/prompt') && response.status() === 202)
        positions.push(((await response.json()) as { queuePosition: number }).queuePosition);
    });
    for (const text of ['first in line', 'second in line', 'third in line']) {
      await page.getByLabel(/^Message/).fill(text);
      await page.getByRole('button', { name: 'Send' }).click();
      // The first runs at once (its place is the running one's); the others wait behind it.
      await page
        .getByRole('status')
        .filter({ hasText: /Queued at position|Running/ })
        .waitFor();
      await page.getByRole('button', { name: 'Send' }).and(page.locator(':enabled')).waitFor();
    }
    const queue = page.getByRole('list', { name: 'Turns running and waiting' });
    await queue.getByText('position 3').waitFor();
    expect(await queue.getByRole('listitem').allTextContents()).toEqual([
      'running first in line',
      'position 2 second in line',
      'position 3 third in line',
    ]);
    expect(positions).toEqual([1, 2, 3]);
    await page.getByText('Queued at position 3').waitFor();
    await checkPage(watched, 'runtime-session-queue');

    release();
    await page.getByText('No turn is running or waiting.').waitFor();
    await transcript(page).getByText('Echo: third in line').waitFor();
    // What the prompt route said when it was queued is not left standing once the turn ran.
    const promptStatus = page.getByRole('form', { name: 'Prompt' }).getByRole('status');
    await expect.poll(() => promptStatus.textContent()).toBe('');
    const started = (await api.history(id)).filter((e) => e.type === 'TurnStarted').length;
    expect(started).toBe(3);
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('says where the prompt sent stands as its turn waits, runs and ends; then shows its tokens, cost and latency', async () => {
    const { id } = await api.create({ title: 'Usage', model: 'dev/echo' });
    const busy = await api.create({ title: 'Held', model: 'test/paced' });
    const watched = await openPage(browser);
    const { page } = watched;
    await openSession(page, busy.id);
    const promptStatus = page.getByRole('form', { name: 'Prompt' }).getByRole('status');
    const release = paced.hold();
    await page.getByLabel(/^Message/).fill('held for a while');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => promptStatus.textContent()).toBe('Running');
    release();
    await transcript(page).getByText('Echo: held for a while', { exact: true }).waitFor();
    await expect.poll(() => promptStatus.textContent()).toBe('');
    await untilIdle(busy.id);

    await openSession(page, id);
    await page.getByLabel(/^Message/).fill('count my tokens please');
    await page.getByRole('button', { name: 'Send' }).click();
    const turn = page.getByRole('article', { name: 'Turn 1' });
    await turn.getByText('Echo: count my tokens please', { exact: true }).waitFor();
    const line = turn.locator('.turn-usage');
    await line.waitFor(); // shown once the answer's MessageCompleted is stored
    const history = await api.history(id);
    const completed = history.filter((e) => e.type === 'MessageCompleted').at(-1)!;
    const usage = completed.data.usage as { inputTokens: number; outputTokens: number; costUsd: number };
    expect(usage.inputTokens).toBeGreaterThan(0);
    expect(usage.outputTokens).toBeGreaterThan(0);
    // At the price set for dev/echo: 3 and 7 micro-dollars a token in and out.
    const costUsd = (usage.inputTokens * 3 + usage.outputTokens * 7) / 1_000_000;
    expect(usage.costUsd).toBe(costUsd);
    expect(await line.locator('[data-field="input-tokens"]').textContent()).toBe(
      `${usage.inputTokens} tokens in`,
    );
    expect(await line.locator('[data-field="output-tokens"]').textContent()).toBe(
      `${usage.outputTokens} tokens out`,
    );
    const cost = await line.locator('[data-field="cost"]').textContent();
    expect(cost).toMatch(/^\$0\.\d{2,6}$/);
    expect(Number(cost?.slice(1))).toBe(costUsd);
    expect(await line.locator('[data-field="latency"]').textContent()).toMatch(/^\d+(\.\d)? s$/);
    expect(await promptStatus.textContent()).toBe('');
    await checkPage(watched, 'runtime-session-usage');
    await watched.context.close();
  });

  it('attaches files by picker and by drop, and shows the turn’s tool calls with inputs and results', async () => {
    const { id } = await api.create({ title: 'Files', model: 'dev/echo' });
    const watched = await openPage(browser);
    const { page } = watched;
    await openSession(page, id);
    await page.getByLabel(/^Attach files/).setInputFiles({
      name: 'notes.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from('picked by hand'),
    });
    await page.getByRole('list', { name: 'Attachments' }).getByText('notes.txt').waitFor();
    // A drop as the browser delivers it: a DataTransfer with a File, on the prompt form.
    await page.evaluate(`(() => {
      const data = new DataTransfer();
      data.items.add(new File(['a,b\\n1,2\\n'], 'table.csv', { type: 'text/csv' }));
      const form = document.querySelector('form[aria-label="Prompt"]');
      form.dispatchEvent(new DragEvent('dragover', { dataTransfer: data, bubbles: true, cancelable: true }));
      form.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
    })()`);
    await page.getByRole('list', { name: 'Attachments' }).getByText('table.csv').waitFor();
    await page.getByLabel(/^Message/).fill('tool:files__list {}');
    await page.getByRole('button', { name: 'Send' }).click();

    const turn = page.getByRole('article', { name: 'Turn 1' });
    await turn.getByText('completed', { exact: true }).first().waitFor();
    await turn.getByText('Attached notes.txt').waitFor();
    await turn.getByText('Attached table.csv').waitFor();
    const tool = turn.locator('details.tool');
    await tool.getByText('files__list').waitFor();
    expect(await tool.locator('pre').first().textContent()).toBe('{}');
    expect(await tool.locator('pre').nth(1).textContent()).toContain('"attachments"');
    await turn.getByText(/^Tool files__list returned:/).waitFor();
    await checkPage(watched, 'runtime-session-tools');

    // Through the API: both files were recorded with the turn and written to the workspace.
    const files = (await api.history(id))
      .filter((e) => e.type === 'PartUpdated' && (e.data.part as { type: string }).type === 'file')
      .map((e) => e.data.part as { name: string; path: string; mime_type: string });
    expect(files.map((f) => [f.name, f.mime_type])).toEqual([
      ['notes.txt', 'text/plain'],
      ['table.csv', 'text/csv'],
    ]);
    expect(await readFile(join(stack.workspace, files[0]!.path), 'utf8')).toBe('picked by hand');
    expect(await readFile(join(stack.workspace, files[1]!.path), 'utf8')).toBe('a,b\n1,2\n');
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('forks at a revision: the new session has the history up to it, and says where it came from', async () => {
    const { id } = await api.create({ title: 'Source', model: 'dev/echo' });
    await api.prompt(id, 'one');
    await api.prompt(id, 'two');
    const firstEnd = (await api.history(id)).find((e) => e.type === 'TurnCompleted')!.revision;
    const watched = await openPage(browser);
    const { page } = watched;
    await openSession(page, id);
    await transcript(page).getByText('Echo: two').waitFor();
    await page.getByLabel(/^At revision/).fill(String(firstEnd));
    await page.getByRole('button', { name: 'Fork session' }).click();
    await page.waitForURL((url) => !url.hash.endsWith(id));
    const forkId = /#\/sessions\/([^/]+)$/.exec(page.url())?.[1] as string;
    expect(await api.get(forkId)).toMatchObject({ forked_from: { session_id: id, revision: firstEnd } });
    await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
    await transcript(page).getByText('Echo: one').waitFor();
    expect(await transcript(page).getByText('Echo: two').count()).toBe(0);
    await page.getByText(`Forked from`).waitFor();

    await page.getByRole('link', { name: '← Sessions' }).click();
    const row = page.getByRole('row', { name: new RegExp(forkId) });
    await row.getByRole('link', { name: id }).waitFor();
    await checkPage(watched, 'runtime-sessions');
    await watched.context.close();
  });

  it('lists sessions page by page', async () => {
    for (let i = 0; i < 50; i++) await api.create({ title: `bulk ${i}` });
    const total = ((await stack.call('GET', '/api/sdk/sessions?limit=200')).json.items as unknown[]).length;
    const watched = await openPage(browser);
    const { page } = watched;
    await page.goto(`${stack.runtime.url}/#/sessions`);
    await page.getByText('50 sessions').waitFor();
    await page.getByRole('button', { name: 'Load more sessions' }).click();
    await page.getByText(`${total} sessions`).waitFor();
    expect(await page.getByRole('button', { name: 'Load more sessions' }).count()).toBe(0);
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('searches the sessions by title or first message, and deletes one after a confirmation', async () => {
    const alpha = await api.create({ title: 'Alpha quarterly report', model: 'dev/echo' });
    const beta = await api.create({ title: 'Beta', model: 'dev/echo' });
    expect((await api.prompt(beta.id, 'a needle in the first message')).status).toBe(200);
    const watched = await openPage(browser);
    const { page } = watched;
    await page.goto(`${stack.runtime.url}/#/sessions`);
    const rows = page.getByRole('table').getByRole('row');
    await page.getByRole('row', { name: /Alpha quarterly report/ }).waitFor();

    const search = page.getByLabel(/^Search sessions/);
    await search.fill('QUARTERLY');
    await expect.poll(() => rows.count()).toBe(2); // the header and Alpha
    await page.getByRole('row', { name: /Alpha quarterly report/ }).waitFor();
    await search.fill('needle in the first');
    await page.getByRole('row', { name: /Beta/ }).waitFor();
    await expect.poll(() => rows.count()).toBe(2);
    await search.fill('nothing is called this');
    await page
      .locator('p.empty')
      .filter({ hasText: 'No session matches "nothing is called this".' })
      .waitFor();
    expect(await page.getByRole('table').count()).toBe(0);
    await search.fill('');

    await page.getByRole('button', { name: 'Delete Alpha quarterly report' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete session Alpha quarterly report?' });
    await dialog.getByRole('button', { name: 'Delete session' }).waitFor();
    await checkPage(watched, 'runtime-sessions-delete');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await api.get(alpha.id)).id).toBe(alpha.id);
    await page.getByRole('button', { name: 'Delete Alpha quarterly report' }).click();
    await dialog.getByRole('button', { name: 'Delete session' }).click();
    await page.getByRole('row', { name: /Alpha quarterly report/ }).waitFor({ state: 'detached' });
    expect((await stack.call('GET', `/api/sdk/sessions/${alpha.id}`)).status).toBe(404);
    const listed = (await stack.call('GET', '/api/sdk/sessions?limit=200')).json.items as { id: string }[];
    expect(listed.map((s) => s.id)).not.toContain(alpha.id);
    await page.getByRole('row', { name: /Beta/ }).waitFor();
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('shows a refusal with its envelope message and request id (an unknown session)', async () => {
    const watched = await openPage(browser);
    watched.allowStatuses(404);
    const { page } = watched;
    await page.goto(`${stack.runtime.url}/#/sessions/ses_missing`);
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(
      /session ses_missing does not exist.*not_found.*request id [0-9a-f-]{36}/,
    );
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('works by keyboard at phone width', async () => {
    const { id } = await api.create({ title: 'Phone', model: 'dev/echo' });
    const watched = await openPage(browser, { viewport: PHONE });
    const { page } = watched;
    await openSession(page, id);
    await page.getByLabel(/^Message/).focus();
    await page.keyboard.type('typed on a phone');
    await page.keyboard.press('Tab'); // the file picker
    await page.keyboard.press('Tab'); // Send
    await page.keyboard.press('Enter');
    await transcript(page).getByText('Echo: typed on a phone').waitFor();
    const overflow = (await page.evaluate(
      'document.documentElement.scrollWidth - window.innerWidth',
    )) as number;
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(page, 'runtime-session-phone');
    expect(await seriousViolations(page)).toEqual([]);
    watched.expectNoProblems();
    await watched.context.close();
  });
});
