import type { ServerResponse } from 'node:http';
import { type MockHandler, type Recorded, recordingServer, sendJson } from './recording-server.ts';

/**
 * Mock upstreams on loopback (plain node:http) that speak OpenAI's and Anthropic's wire formats.
 * By default they answer chat requests the way the real APIs do (JSON, or SSE when `stream` is
 * true), echoing the last user text; a test scripts anything else: exact answers, streams held
 * between two events, error bodies, silence.
 */

export type { MockHandler, Recorded };
export { sendJson };

/** A JSON body as the mock received it. */
// biome-ignore lint/suspicious/noExplicitAny: parsed request bodies, compared whole by the tests.
export type Json = any;

export interface WireMock {
  url: string;
  /** Every request received since the last `reset`, in order. */
  requests: Recorded[];
  /** The JSON body of request `n` (default: the last one). */
  body(n?: number): Json;
  /** Answers every request with `handler` until `reset`. */
  reply(handler: MockHandler): void;
  /** Answers the next requests with these handlers, one each, then falls back to the current one. */
  script(...handlers: MockHandler[]): void;
  /** Forgets requests and scripts; answers the default way again. */
  reset(): void;
  close(): Promise<void>;
}

/**
 * A recording mock that answers with the scripted handlers, else `defaultHandler`. `refuse`, when
 * given, sees every request first (scripted ones too), answers those it refuses (a bad signature, a
 * wrong key) and says whether it did.
 */
export async function wireMock(
  defaultHandler: MockHandler,
  refuse?: (req: Recorded, res: ServerResponse) => Promise<boolean>,
): Promise<WireMock> {
  let current = defaultHandler;
  const queue: MockHandler[] = [];
  const answer: MockHandler = (req, res) => (queue.shift() ?? current)(req, res);
  const server = await recordingServer(
    refuse
      ? async (req, res) => {
          if (!(await refuse(req, res))) return answer(req, res);
        }
      : answer,
  );
  return {
    url: server.url,
    requests: server.requests,
    body(n) {
      const request = n === undefined ? server.requests.at(-1) : server.requests[n];
      if (!request) throw new Error(`the mock has no request ${n ?? '(last)'}`);
      return JSON.parse(request.body.toString());
    },
    reply(handler) {
      current = handler;
    },
    script(...handlers) {
      queue.push(...handlers);
    },
    reset() {
      server.requests.length = 0;
      queue.length = 0;
      current = defaultHandler;
    },
    close: () => server.close(),
  };
}

/** A promise opened by hand: holds a mock between two events until the test has seen the first. */
export function gate(): { wait: Promise<void>; open(): void } {
  let open = () => {};
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

/** Starts an SSE answer; each event is written (and so flushed) at once. */
export function sse(res: ServerResponse) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
  return {
    send(data: unknown, event?: string) {
      const text = typeof data === 'string' ? data : JSON.stringify(data);
      res.write(`${event ? `event: ${event}\n` : ''}data: ${text}\n\n`);
    },
    end: () => res.end(),
  };
}

/** Handlers for failures every upstream has. */
export const faults = {
  /** Answers `status` with a JSON body. */
  status:
    (status: number, body: unknown, headers: Record<string, string> = {}): MockHandler =>
    (_req, res) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    },
  /** Takes the request and never answers. */
  silence: (): MockHandler => () => undefined,
  /** Sends the headers and part of a JSON body, then goes silent. */
  stallMidBody: (): MockHandler => (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"id":"half an ans');
  },
};

const lastUserText = (body: Json): string => {
  const message = [...(body.messages ?? [])].reverse().find((m: Json) => m.role === 'user');
  if (!message) return '';
  if (typeof message.content === 'string') return message.content;
  return (message.content ?? [])
    .filter((part: Json) => part.type === 'text')
    .map((part: Json) => part.text)
    .join('');
};
const words = (text: string) => text.split(/(?<=\s)/).filter(Boolean);

// ---------------------------------------------------------------------------------------------
// OpenAI

export const openAiWire = {
  completion(
    message: { content: string | null; tool_calls?: unknown[]; [key: string]: unknown },
    options: { model?: string; finish_reason?: string; usage?: unknown; [key: string]: unknown } = {},
  ) {
    const { model = 'gpt-4.1-mini', finish_reason, usage, ...extra } = options;
    return {
      id: 'chatcmpl-mock',
      object: 'chat.completion',
      created: 1_700_000_000,
      model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', refusal: null, ...message },
          logprobs: null,
          finish_reason: finish_reason ?? (message.tool_calls ? 'tool_calls' : 'stop'),
        },
      ],
      usage: usage ?? { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
      ...extra,
    };
  },
  chunk(delta: Record<string, unknown>, finish: string | null = null, model = 'gpt-4.1-mini') {
    return {
      id: 'chatcmpl-mock',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    };
  },
  usageChunk(usage: { prompt_tokens: number; completion_tokens: number }, model = 'gpt-4.1-mini') {
    return {
      id: 'chatcmpl-mock',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model,
      choices: [],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    };
  },
  error(message: string, type = 'invalid_request_error', code: string | null = null) {
    return { error: { message, type, param: null, code } };
  },
};

/** Streams OpenAI chunks then `[DONE]`; waits on `hold` (if any) after the chunk at `holdAfter`. */
export function openAiStream(chunks: unknown[], hold?: { after: number; wait: Promise<void> }): MockHandler {
  return async (_req, res) => {
    const out = sse(res);
    for (const [i, chunk] of chunks.entries()) {
      out.send(chunk);
      if (hold && i === hold.after) await hold.wait;
    }
    out.send('[DONE]');
    out.end();
  };
}

// OpenAI's Responses API

/** The text of the last user message of a Responses `input` (a string, or items). */
const lastUserInput = (input: Json): string => {
  if (typeof input === 'string') return input;
  const message = [...(input ?? [])].reverse().find((item: Json) => item.role === 'user');
  if (!message) return '';
  if (typeof message.content === 'string') return message.content;
  return (message.content ?? []).map((part: Json) => part.text ?? '').join('');
};

export const openAiResponsesWire = {
  message(text: string, id = 'msg_upstream') {
    return {
      type: 'message',
      id,
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
    };
  },
  usage(input_tokens: number, output_tokens: number) {
    return {
      input_tokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: input_tokens + output_tokens,
    };
  },
  response(output: unknown[], options: { model?: string; usage?: unknown; status?: string } = {}) {
    return {
      id: 'resp_upstream',
      object: 'response',
      created_at: 1_700_000_000,
      status: options.status ?? 'completed',
      error: null,
      incomplete_details: null,
      instructions: null,
      max_output_tokens: null,
      model: options.model ?? 'gpt-4.1-mini',
      output,
      parallel_tool_calls: true,
      previous_response_id: null,
      store: true,
      usage: options.usage ?? openAiResponsesWire.usage(7, 3),
    };
  },
  /** The events of a streamed response of one message, its text in `words`. */
  events(words: string[], options: { model?: string; usage?: unknown } = {}) {
    const text = words.join('');
    const item = openAiResponsesWire.message(text);
    const inProgress = { ...openAiResponsesWire.response([], options), status: 'in_progress', usage: null };
    const at = { item_id: item.id, output_index: 0, content_index: 0 };
    const part = { type: 'output_text', text: '', annotations: [], logprobs: [] };
    return [
      { type: 'response.created', response: inProgress },
      { type: 'response.in_progress', response: inProgress },
      {
        type: 'response.output_item.added',
        output_index: 0,
        item: { ...item, status: 'in_progress', content: [] },
      },
      { type: 'response.content_part.added', ...at, part },
      ...words.map((delta) => ({ type: 'response.output_text.delta', ...at, delta, logprobs: [] })),
      { type: 'response.output_text.done', ...at, text, logprobs: [] },
      { type: 'response.content_part.done', ...at, part: { ...part, text } },
      { type: 'response.output_item.done', output_index: 0, item },
      { type: 'response.completed', response: openAiResponsesWire.response([item], options) },
    ].map((event, sequence_number) => ({ ...event, sequence_number }));
  },
};

/** Streams Responses events, each named by its type; waits on `hold` (if any) after the event at `hold.after`. */
export function openAiResponsesStream(
  events: { type: string }[],
  hold?: { after: number; wait: Promise<void> },
): MockHandler {
  return async (_req, res) => {
    const out = sse(res);
    for (const [i, event] of events.entries()) {
      out.send(event, event.type);
      if (hold && i === hold.after) await hold.wait;
    }
    out.end();
  };
}

/** OpenAI's Responses API: "Echo: <last user text>", as JSON or streamed word by word. */
const openAiResponsesDefault: MockHandler = (req, res) => {
  const body = JSON.parse(req.body.toString());
  const said = lastUserInput(body.input);
  const text = `Echo: ${said}`;
  const options = {
    model: body.model,
    usage: openAiResponsesWire.usage(words(said).length, words(text).length),
  };
  if (!body.stream)
    return sendJson(res, 200, openAiResponsesWire.response([openAiResponsesWire.message(text)], options));
  return openAiResponsesStream(openAiResponsesWire.events(words(text), options))(req, res);
};

/** OpenAI: chat completions and the Responses API, "Echo: <last user text>", as JSON or streamed word by word. */
export const openAiDefault: MockHandler = (req, res) => {
  if (req.method === 'POST' && req.path.endsWith('/responses')) return openAiResponsesDefault(req, res);
  if (req.method !== 'POST' || !req.path.endsWith('/chat/completions'))
    return sendJson(res, 404, openAiWire.error(`Invalid URL (${req.method} ${req.path})`));
  const body = JSON.parse(req.body.toString());
  const text = `Echo: ${lastUserText(body)}`;
  const usage = { prompt_tokens: words(lastUserText(body)).length, completion_tokens: words(text).length };
  if (!body.stream) {
    return sendJson(
      res,
      200,
      openAiWire.completion(
        { content: text },
        {
          model: body.model,
          usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
        },
      ),
    );
  }
  const chunks = [
    openAiWire.chunk({ role: 'assistant', content: '' }, null, body.model),
    ...words(text).map((word) => openAiWire.chunk({ content: word }, null, body.model)),
    openAiWire.chunk({}, 'stop', body.model),
    ...(body.stream_options?.include_usage ? [openAiWire.usageChunk(usage, body.model)] : []),
  ];
  return openAiStream(chunks)(req, res);
};

export const openAiMock = () => wireMock(openAiDefault);

// ---------------------------------------------------------------------------------------------
// Anthropic

export const anthropicWire = {
  message(
    content: unknown[],
    options: { stop_reason?: string; usage?: Record<string, number>; model?: string } = {},
  ) {
    return {
      id: 'msg_mock',
      type: 'message',
      role: 'assistant',
      model: options.model ?? 'claude-sonnet-4-5',
      content,
      stop_reason: options.stop_reason ?? 'end_turn',
      stop_sequence: null,
      usage: options.usage ?? { input_tokens: 7, output_tokens: 3 },
    };
  },
  /** One stream event: `[name, data]`, the data carrying its `type` as Anthropic's do. */
  event(type: string, data: Record<string, unknown> = {}): [string, Record<string, unknown>] {
    return [type, { type, ...data }];
  },
  error(message: string, type = 'invalid_request_error') {
    return { type: 'error', error: { type, message } };
  },
};

/** The events of a whole streamed answer made of text blocks and tool_use blocks. */
export function anthropicEvents(
  blocks: ({ text: string[] } | { tool: { id: string; name: string }; json: string[] })[],
  options: { stop_reason?: string; input_tokens?: number; output_tokens?: number } = {},
): [string, Record<string, unknown>][] {
  const { event } = anthropicWire;
  return [
    event('message_start', {
      message: {
        id: 'msg_mock',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [],
        stop_reason: null,
        usage: { input_tokens: options.input_tokens ?? 7, output_tokens: 1 },
      },
    }),
    event('ping'),
    ...blocks.flatMap((block, index) => [
      'text' in block
        ? event('content_block_start', { index, content_block: { type: 'text', text: '' } })
        : event('content_block_start', {
            index,
            content_block: { type: 'tool_use', id: block.tool.id, name: block.tool.name, input: {} },
          }),
      ...('text' in block
        ? block.text.map((text) =>
            event('content_block_delta', { index, delta: { type: 'text_delta', text } }),
          )
        : block.json.map((partial_json) =>
            event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } }),
          )),
      event('content_block_stop', { index }),
    ]),
    event('message_delta', {
      delta: { stop_reason: options.stop_reason ?? 'end_turn', stop_sequence: null },
      usage: { output_tokens: options.output_tokens ?? 3 },
    }),
    event('message_stop'),
  ];
}

/** Streams Anthropic events (`event:` line and data); waits on `hold` after the event at `hold.after`. */
export function anthropicStream(
  events: [string, Record<string, unknown>][],
  hold?: { after: number; wait: Promise<void> },
): MockHandler {
  return async (_req, res) => {
    const out = sse(res);
    for (const [i, [type, data]] of events.entries()) {
      out.send(data, type);
      if (hold && i === hold.after) await hold.wait;
    }
    out.end();
  };
}

/** Anthropic's Messages API: "Echo: <last user text>", as JSON or streamed word by word. */
const anthropicDefault: MockHandler = (req, res) => {
  if (req.method !== 'POST' || req.path !== '/v1/messages')
    return sendJson(res, 404, anthropicWire.error(`Not found: ${req.path}`, 'not_found_error'));
  if (!req.headers['x-api-key'])
    return sendJson(res, 401, anthropicWire.error('x-api-key header is required', 'authentication_error'));
  const body = JSON.parse(req.body.toString());
  const text = `Echo: ${lastUserText(body)}`;
  const usage = { input_tokens: words(lastUserText(body)).length, output_tokens: words(text).length };
  if (!body.stream)
    return sendJson(res, 200, anthropicWire.message([{ type: 'text', text }], { usage, model: body.model }));
  return anthropicStream(anthropicEvents([{ text: words(text) }], usage))(req, res);
};

export const anthropicMock = () => wireMock(anthropicDefault);
