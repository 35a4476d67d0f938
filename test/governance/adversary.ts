import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { nonBlankLength } from '../../services/ai/usage/metering.ts';
import { type Recorded, recordingServer } from '../support/recording-server.ts';

/**
 * How the adversarial upstream answers one request: read from a `[case …]` marker in the request's
 * text, so each generated request carries its own misbehaviour.
 */
export interface Misbehaviour {
  /** Tells the upstream's calls apart: each request's own. */
  nonce: string;
  /** What usage says: the true count (above the gateway's estimate), less, none, or zero output. */
  usage: 'honest' | 'under' | 'omit' | 'zero';
  /** Words of answer text. */
  words: number;
  /** Also streams (or answers) a tool call whose arguments are as long as the text. */
  tools: boolean;
  /** Also streams (or answers) reasoning as long as the text. */
  reasoning: boolean;
  /** Answers all its words whatever cap it was sent. */
  ignoresCap: boolean;
  /** A stream breaks off (the connection dropped) after this many events. */
  breakAfter?: number;
  /** A stream goes silent this long before its last events (past the gateway's idle timeout when long). */
  stallMs?: number;
}

const MARKER = /\[case (\{.*?\})\]/s;

export const caseText = (behaviour: Misbehaviour) => `answer this [case ${JSON.stringify(behaviour)}]`;

/** A call the upstream got: whose request, which API, which model. */
export interface UpstreamCall {
  nonce: string;
  api: 'chat' | 'messages' | 'embeddings';
  model: string;
}

/**
 * An upstream speaking OpenAI's chat completions and embeddings and Anthropic's Messages API, that
 * misbehaves as each request's marker says. Model `bad` always answers 503 (a route's failing target).
 */
export async function adversarialUpstream() {
  const calls: UpstreamCall[] = [];
  const server = await recordingServer((req, res) => answer(req, res, calls));
  return { url: server.url, calls, close: () => server.close() };
}

async function answer(req: Recorded, res: ServerResponse, calls: UpstreamCall[]): Promise<void> {
  const body = JSON.parse(req.body.toString() || '{}') as Record<string, unknown>;
  const text = JSON.stringify(body);
  const marker = MARKER.exec(text.replace(/\\"/g, '"'));
  const behaviour = marker ? (JSON.parse(marker[1]!) as Misbehaviour) : undefined;
  const api = req.path.endsWith('/messages')
    ? 'messages'
    : req.path.endsWith('/embeddings')
      ? 'embeddings'
      : 'chat';
  calls.push({ nonce: behaviour?.nonce ?? '', api, model: String(body.model) });
  if (body.model === 'bad') return json(res, 503, { error: { message: 'overloaded' } });
  if (api === 'embeddings') return embeddings(res, body);
  if (!behaviour) return json(res, 400, { error: { message: 'no [case] marker' } });
  const cap = Number(body.max_tokens ?? body.max_completion_tokens ?? Number.POSITIVE_INFINITY);
  const words = behaviour.ignoresCap ? behaviour.words : Math.max(0, Math.min(behaviour.words, cap));
  const output = answerOf(behaviour, words);
  const promptTokens = Math.ceil(nonBlankLength(text) / 3);
  const usage = usageOf(behaviour, promptTokens, output);
  if (api === 'messages')
    return body.stream ? messagesStream(res, behaviour, output, usage) : messagesJson(res, output, usage);
  return body.stream ? chatStream(res, behaviour, output, usage) : chatJson(res, output, usage);
}

interface Output {
  text: string[];
  reasoning: string[];
  args: string[];
}

function answerOf(b: Misbehaviour, words: number): Output {
  const text = Array.from({ length: words }, (_, i) => `word${i} `);
  const parts = (prefix: string) => (text.length === 0 ? [] : text.map((_, i) => `${prefix}${i} `));
  return {
    text,
    reasoning: b.reasoning ? parts('thought') : [],
    args: b.tools ? ['{"q":"', ...parts('arg'), '"}'] : [],
  };
}

/** Three non-blank characters a token: more than the gateway's estimate, as a real tokenizer counts. */
const trueCount = (pieces: string[]) => Math.ceil(nonBlankLength(pieces.join('')) / 3);

function usageOf(b: Misbehaviour, input: number, output: Output) {
  const all = trueCount([
    ...output.text,
    ...output.reasoning,
    ...output.args,
    output.args.length ? 'lookup' : '',
  ]);
  switch (b.usage) {
    case 'honest':
      return { input, output: all };
    case 'under':
      return { input: 1, output: Math.floor(trueCount(output.text) / 4) };
    case 'zero':
      return { input, output: 0 };
    case 'omit':
      return undefined;
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function embeddings(res: ServerResponse, body: Record<string, unknown>): void {
  const inputs = Array.isArray(body.input) ? body.input : [body.input];
  json(res, 200, {
    object: 'list',
    model: body.model,
    data: inputs.map((_, index) => ({ object: 'embedding', index, embedding: [0.6, 0.8] })),
    // Under-reports: one token whatever the input.
    usage: { prompt_tokens: 1, total_tokens: 1 },
  });
}

function chatJson(res: ServerResponse, output: Output, usage: ReturnType<typeof usageOf>): void {
  json(res, 200, {
    id: 'chatcmpl-adv',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: output.text.join(''),
          ...(output.reasoning.length ? { reasoning_content: output.reasoning.join('') } : {}),
          ...(output.args.length
            ? {
                tool_calls: [
                  {
                    id: 'call_1',
                    type: 'function',
                    function: { name: 'lookup', arguments: output.args.join('') },
                  },
                ],
              }
            : {}),
        },
        finish_reason: 'stop',
      },
    ],
    ...(usage
      ? {
          usage: {
            prompt_tokens: usage.input,
            completion_tokens: usage.output,
            total_tokens: usage.input + usage.output,
          },
        }
      : {}),
  });
}

/** Writes server-sent events one at a time, misbehaving as asked: stalls, breaks off. */
async function streamEvents(res: ServerResponse, b: Misbehaviour, events: string[]): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.flushHeaders();
  for (const [i, event] of events.entries()) {
    if (b.breakAfter !== undefined && i >= b.breakAfter) {
      // What was written reaches the gateway before the connection drops.
      await sleep(5);
      res.destroy();
      return;
    }
    if (b.stallMs && i === events.length - 2) await sleep(b.stallMs);
    if (res.destroyed) return;
    res.write(event);
    // An event at a time, as an upstream generating them sends them.
    await new Promise((resolve) => setImmediate(resolve));
  }
  res.end();
}

function chatStream(res: ServerResponse, b: Misbehaviour, output: Output, usage: ReturnType<typeof usageOf>) {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-adv', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const events = [
    chunk({ role: 'assistant', content: '' }),
    ...output.reasoning.map((r) => chunk({ reasoning_content: r })),
    ...output.text.map((t) => chunk({ content: t })),
    ...(output.args.length
      ? [
          chunk({
            tool_calls: [
              { index: 0, id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '' } },
            ],
          }),
          ...output.args.map((a) => chunk({ tool_calls: [{ index: 0, function: { arguments: a } }] })),
        ]
      : []),
    chunk({}, 'stop'),
    ...(usage
      ? [
          `data: ${JSON.stringify({ id: 'chatcmpl-adv', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output } })}\n\n`,
        ]
      : []),
    'data: [DONE]\n\n',
  ];
  return streamEvents(res, b, events);
}

function messagesJson(res: ServerResponse, output: Output, usage: ReturnType<typeof usageOf>): void {
  json(res, 200, {
    id: 'msg_adv',
    type: 'message',
    role: 'assistant',
    model: 'claude',
    content: [
      ...(output.reasoning.length
        ? [{ type: 'thinking', thinking: output.reasoning.join(''), signature: 'sig' }]
        : []),
      { type: 'text', text: output.text.join('') },
      ...(output.args.length
        ? [
            {
              type: 'tool_use',
              id: 'toolu_1',
              name: 'lookup',
              input: { q: output.args.slice(1, -1).join('') },
            },
          ]
        : []),
    ],
    stop_reason: 'end_turn',
    stop_sequence: null,
    // Anthropic always reports usage: "omit" sends the count `message_start` has before anything is generated.
    usage: { input_tokens: usage?.input ?? 1, output_tokens: usage?.output ?? 1 },
  });
}

function messagesStream(
  res: ServerResponse,
  b: Misbehaviour,
  output: Output,
  usage: ReturnType<typeof usageOf>,
) {
  const event = (type: string, data: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const blocks: string[] = [];
  let index = 0;
  if (output.reasoning.length) {
    blocks.push(event('content_block_start', { index, content_block: { type: 'thinking', thinking: '' } }));
    for (const r of output.reasoning)
      blocks.push(event('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: r } }));
    blocks.push(event('content_block_stop', { index: index++ }));
  }
  blocks.push(event('content_block_start', { index, content_block: { type: 'text', text: '' } }));
  for (const t of output.text)
    blocks.push(event('content_block_delta', { index, delta: { type: 'text_delta', text: t } }));
  blocks.push(event('content_block_stop', { index: index++ }));
  if (output.args.length) {
    blocks.push(
      event('content_block_start', {
        index,
        content_block: { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} },
      }),
    );
    for (const a of output.args)
      blocks.push(
        event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: a } }),
      );
    blocks.push(event('content_block_stop', { index }));
  }
  const events = [
    // `message_start` says 1 output token, as Anthropic's does: nothing is generated yet.
    event('message_start', {
      message: {
        id: 'msg_adv',
        type: 'message',
        role: 'assistant',
        model: 'claude',
        content: [],
        stop_reason: null,
        usage: { input_tokens: usage?.input ?? 1, output_tokens: 1 },
      },
    }),
    ...blocks,
    // "omit": the final delta leaves usage out.
    event('message_delta', {
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      ...(usage ? { usage: { output_tokens: usage.output } } : {}),
    }),
    event('message_stop', {}),
  ];
  return streamEvents(res, b, events);
}
