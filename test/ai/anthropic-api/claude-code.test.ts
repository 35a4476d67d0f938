import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  anthropicEvents,
  anthropicMock,
  anthropicStream,
  type Json,
  sendJson,
  type WireMock,
} from '../../support/mock-ai-upstreams.ts';
import {
  type ProviderGateway,
  type SseEvent,
  SseEvents,
  startProviderGateway,
} from '../providers/support.ts';
import { anthropicBase } from './support.ts';

// What Claude Code sends when ANTHROPIC_BASE_URL points at the gateway: `?beta=true`, its key in
// x-api-key (or a bearer token from ANTHROPIC_AUTH_TOKEN), betas, a system prompt of blocks with
// cache_control, metadata, tools with JSON schemas, thinking, and a stream.

const KEY = 'sk-ant-api03-claude-code-test-0123456789';
let mock: WireMock;
let pg: ProviderGateway;

beforeAll(async () => {
  mock = await anthropicMock();
  pg = await startProviderGateway({ processEnv: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: mock.url } });
});
beforeEach(() => mock.reset());
afterAll(async () => {
  await pg?.close();
  await mock?.close();
});

const BETAS = 'claude-code-20250219,interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14';

const bash = {
  name: 'Bash',
  description: 'Executes a given bash command in a persistent shell session.',
  input_schema: {
    type: 'object',
    properties: {
      command: { type: 'string', description: 'The command to execute' },
      timeout: { type: 'number', description: 'Optional timeout in milliseconds' },
    },
    required: ['command'],
    additionalProperties: false,
    $schema: 'http://json-schema.org/draft-07/schema#',
  },
};

function claudeCodeBody(model: string, messages: Json[]) {
  return {
    model,
    messages,
    temperature: 1,
    system: [
      {
        type: 'text',
        text: "You are Claude Code, Anthropic's official CLI for Claude.",
        cache_control: { type: 'ephemeral' },
      },
      { type: 'text', text: 'You are an interactive CLI tool.', cache_control: { type: 'ephemeral' } },
    ],
    tools: [bash],
    metadata: { user_id: 'user_0123_account__session_4567' },
    max_tokens: 32000,
    thinking: { type: 'enabled', budget_tokens: 1024 },
    stream: true,
  };
}

const userTurn = (text: string) => ({
  role: 'user',
  content: [
    { type: 'text', text: '<system-reminder>This is a reminder.</system-reminder>' },
    { type: 'text', text, cache_control: { type: 'ephemeral' } },
  ],
});

async function claudeCode(
  path: string,
  body: unknown,
  credential: 'x-api-key' | 'authorization' = 'x-api-key',
): Promise<{ status: number; events: SseEvent[]; response: Response }> {
  const response = await fetch(`${anthropicBase(pg.gw)}${path}?beta=true`, {
    method: 'POST',
    headers: {
      accept: 'application/json',
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      'anthropic-beta': BETAS,
      'anthropic-dangerous-direct-browser-access': 'true',
      'user-agent': 'claude-cli/2.0.0 (external, cli)',
      'x-app': 'cli',
      ...(credential === 'x-api-key' ? { 'x-api-key': pg.token } : { authorization: `Bearer ${pg.token}` }),
    },
    body: JSON.stringify(body),
  });
  const streamed = (response.headers.get('content-type') ?? '').startsWith('text/event-stream');
  return { status: response.status, response, events: streamed ? await new SseEvents(response).rest() : [] };
}

const textOf = (events: SseEvent[]) =>
  events
    .filter((e) => e.event === 'content_block_delta' && e.data.delta.type === 'text_delta')
    .map((e) => e.data.delta.text)
    .join('');

describe('a Claude Code session through the gateway', () => {
  it('on anthropic/*: the request goes upstream untouched but model, betas and version with it', async () => {
    mock.reply(anthropicStream(anthropicEvents([{ text: ['Sure.'] }])));
    const body = claudeCodeBody('anthropic/claude-sonnet-4-5', [userTurn('list the files')]);
    const { status, events } = await claudeCode('/v1/messages', body);
    expect(status).toBe(200);
    expect(textOf(events)).toBe('Sure.');
    expect(events.at(-1)?.event).toBe('message_stop');
    const sent = mock.requests[0]!;
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['anthropic-beta']).toBe(BETAS);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.headers['x-api-key']).toBe(KEY);
    expect(mock.body()).toEqual({ ...body, model: 'claude-sonnet-4-5' });
  });

  it('on anthropic/*, with ANTHROPIC_AUTH_TOKEN (a bearer token) in place of a key', async () => {
    mock.reply(anthropicStream(anthropicEvents([{ text: ['ok'] }])));
    const { status, events } = await claudeCode(
      '/v1/messages',
      claudeCodeBody('anthropic/claude-sonnet-4-5', [userTurn('hi')]),
      'authorization',
    );
    expect(status).toBe(200);
    expect(textOf(events)).toBe('ok');
  });

  it('count_tokens with its beta', async () => {
    mock.reply((_req, res) => sendJson(res, 200, { input_tokens: 1234 }));
    const { messages, tools, model, system } = claudeCodeBody('anthropic/claude-sonnet-4-5', [
      userTurn('hi'),
    ]);
    const res = await fetch(`${anthropicBase(pg.gw)}/v1/messages/count_tokens?beta=true`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
        'anthropic-beta': 'token-counting-2024-11-01',
        'x-api-key': pg.token,
      },
      body: JSON.stringify({ model, messages, tools, system }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ input_tokens: 1234 });
    expect(mock.requests[0]!.path).toBe('/v1/messages/count_tokens');
    expect(mock.requests[0]!.headers['anthropic-beta']).toBe('token-counting-2024-11-01');
  });

  it('on dev/echo (translated): a tool call, its result, and the answer to it, all streamed', async () => {
    const ask = userTurn('tool:Bash {"command":"ls"}');
    const first = await claudeCode('/v1/messages', claudeCodeBody('dev/echo', [ask]));
    expect(first.status).toBe(200);
    const start = first.events.find((e) => e.event === 'content_block_start');
    expect(start?.data.content_block).toEqual({
      type: 'tool_use',
      id: expect.any(String),
      name: 'Bash',
      input: {},
    });
    const json = first.events
      .filter((e) => e.event === 'content_block_delta')
      .map((e) => e.data.delta.partial_json)
      .join('');
    expect(JSON.parse(json)).toEqual({ command: 'ls' });
    expect(first.events.find((e) => e.event === 'message_delta')?.data.delta.stop_reason).toBe('tool_use');

    const id = start?.data.content_block.id;
    const second = await claudeCode(
      '/v1/messages',
      claudeCodeBody('dev/echo', [
        ask,
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'I should list them.', signature: 'sig' },
            { type: 'tool_use', id, name: 'Bash', input: { command: 'ls' } },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: id,
              content: [{ type: 'text', text: 'README.md' }],
              cache_control: { type: 'ephemeral' },
            },
          ],
        },
      ]),
    );
    expect(second.status).toBe(200);
    expect(textOf(second.events)).toBe('Tool Bash returned: README.md');
    expect(second.events.at(-1)).toEqual({ event: 'message_stop', data: { type: 'message_stop' } });
  });
});
