import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { takeTurn } from '../../../../shared/turns.ts';
import { completionId, nowSeconds } from '../../chat/ids.ts';
import {
  type ChatChunk,
  type ChatCompletion,
  type ChatRequest,
  type ChatUsage,
  type ToolCall,
  textOf,
} from '../../chat/wire.ts';
import { DEV_EMBED_DIMENSIONS, devEmbeddings } from '../../embeddings/dev-embeddings.ts';
import { animatedPng, gradientPng } from '../../media/png.ts';
import { toneWav, wavComment } from '../../media/wav.ts';
import type { ModelDefinition, Provider, VideoProgress } from '../types.ts';

/**
 * Deterministic, offline models, always callable: the whole API works on a fresh machine and in
 * tests. `dev/echo` answers "Echo: <last user text>"; when the request offers tools and the last
 * user text contains `tool:<name> <json arguments>`, it calls that tool instead, and after a tool
 * result it answers "Tool <name> returned: <content>".
 */
const model = (
  id: string,
  name: string,
  description: string,
  modalities: ModelDefinition['modalities'],
): ModelDefinition => ({
  id: `dev/${id}`,
  name,
  description,
  modalities,
  tags: ['dev'],
  meta: { offline: true },
  upstreamModel: id,
});

const MODELS: ModelDefinition[] = [
  {
    ...model('echo', 'Dev echo', 'Deterministic offline chat model that echoes the last user message.', [
      'text',
      'stream',
      'chat',
    ]),
    maxOutputTokens: 4096,
  },
  model('image', 'Dev image', 'Deterministic gradient PNG derived from the prompt.', ['image']),
  model('tts', 'Dev speech', 'A WAV tone whose length follows the text, carrying the text for dev/asr.', [
    'tts',
  ]),
  model('asr', 'Dev transcription', 'Reads back the text carried by dev/tts audio.', ['asr']),
  model('video', 'Dev video', 'A short animated PNG derived from the prompt, produced as a job.', ['video']),
  {
    ...model(
      'embed',
      'Dev embeddings',
      'Deterministic unit vectors hashed from the input: the same text, the same vector.',
      ['embed'],
    ),
    meta: { offline: true, dimensions: DEV_EMBED_DIMENSIONS },
  },
];

const digest = (text: string) => createHash('sha256').update(text).digest();
const rgb = (bytes: Buffer, at: number) => [bytes[at]!, bytes[at + 1]!, bytes[at + 2]!] as const;
/** Words of a text (runs of non-space), counted without making them: a long prompt costs no array. */
function countTokens(text: string): number {
  let words = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const blank = c === 32 || (c >= 9 && c <= 13);
    if (!blank && !inWord) words++;
    inWord = !blank;
  }
  return words;
}

interface Answer {
  content: string | null;
  toolCalls: ToolCall[];
  usage: ChatUsage;
  finishReason: 'stop' | 'length' | 'tool_calls';
}

/**
 * The words of every message, a message a turn of the event loop: a long conversation is counted
 * without holding up other requests, as an upstream reads it elsewhere.
 */
async function promptTokensOf(request: ChatRequest): Promise<number> {
  let tokens = 0;
  for (const message of request.messages) {
    const text = textOf(message.content);
    if (text.length > 64 * 1024) await takeTurn();
    tokens += countTokens(text);
  }
  return tokens;
}

function answer(request: ChatRequest, promptTokens: number): Answer {
  const last = request.messages.at(-1)!;
  const done = (content: string | null, toolCalls: ToolCall[] = []): Answer => {
    const limit = request.max_completion_tokens ?? request.max_tokens;
    const words = content?.split(/(?<=\s)/) ?? [];
    const cut = limit !== undefined && limit !== null && words.length > limit;
    const text = content === null ? null : (cut ? words.slice(0, limit) : words).join('');
    const completionTokens = text === null ? toolCalls.length : countTokens(text);
    return {
      content: text,
      toolCalls,
      finishReason: toolCalls.length ? 'tool_calls' : cut ? 'length' : 'stop',
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
      },
    };
  };

  if (last.role === 'tool') {
    const call = request.messages.flatMap((m) => m.tool_calls ?? []).find((c) => c.id === last.tool_call_id);
    return done(`Tool ${call?.function.name ?? last.name ?? 'tool'} returned: ${textOf(last.content)}`);
  }
  const text = textOf(last.content);
  const toolNames = new Set(request.tools?.map((t) => t.function.name) ?? []);
  const directive = /tool:([A-Za-z0-9_.-]+)\s*(\{.*\})?/s.exec(text);
  if (directive && toolNames.has(directive[1]!)) {
    const args = directive[2] ?? '{}';
    const id = `call_${digest(`${request.messages.length}:${text}`).toString('hex').slice(0, 16)}`;
    return done(null, [{ id, type: 'function', function: { name: directive[1]!, arguments: args } }]);
  }
  return done(`Echo: ${text}`);
}

export const devProvider: Provider = {
  id: 'dev',
  name: 'Dev (offline)',
  env: [],
  models: () => MODELS,

  async chat(m, request) {
    const a = answer(request, await promptTokensOf(request));
    const completion: ChatCompletion = {
      id: completionId(),
      object: 'chat.completion',
      created: nowSeconds(),
      model: m.id,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: a.content,
            ...(a.toolCalls.length ? { tool_calls: a.toolCalls } : {}),
          },
          finish_reason: a.finishReason,
        },
      ],
      usage: a.usage,
    };
    return completion;
  },

  async chatStream(m, request, ctx) {
    const a = answer(request, await promptTokensOf(request));
    const id = completionId();
    const created = nowSeconds();
    const base = { id, object: 'chat.completion.chunk' as const, created, model: m.id };
    const includeUsage = request.stream_options?.include_usage === true;
    async function* chunks(): AsyncGenerator<ChatChunk> {
      yield {
        ...base,
        choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
      };
      if (a.toolCalls.length) {
        for (const [index, call] of a.toolCalls.entries()) {
          yield {
            ...base,
            choices: [
              {
                index: 0,
                delta: {
                  tool_calls: [
                    {
                      index,
                      id: call.id,
                      type: 'function',
                      function: { name: call.function.name, arguments: '' },
                    },
                  ],
                },
                finish_reason: null,
              },
            ],
          };
          yield {
            ...base,
            choices: [
              {
                index: 0,
                delta: { tool_calls: [{ index, function: { arguments: call.function.arguments } }] },
                finish_reason: null,
              },
            ],
          };
        }
      } else {
        for (const word of (a.content ?? '').split(/(?<=\s)/)) {
          if (ctx.signal.aborted) return;
          yield { ...base, choices: [{ index: 0, delta: { content: word }, finish_reason: null }] };
        }
      }
      yield {
        ...base,
        choices: [{ index: 0, delta: {}, finish_reason: a.finishReason }],
      };
      if (includeUsage) yield { ...base, choices: [], usage: a.usage };
    }
    return chunks();
  },

  async image(_m, request) {
    const images = Array.from({ length: request.n }, (_, i) => {
      const hash = digest(`${request.prompt}#${i}`);
      const png = gradientPng(64, 64, rgb(hash, 0), rgb(hash, 3));
      return { b64_json: png.toString('base64'), mime_type: 'image/png' };
    });
    return { images };
  },

  async tts(_m, request) {
    const frequency = 220 + (digest(request.voice ?? 'default')[0]! % 200);
    const durationMs = Math.min(10_000, 200 + request.input.length * 40);
    return { audio: toneWav(frequency, durationMs, request.input), mime_type: 'audio/wav' };
  },

  async asr(_m, request) {
    const carried = wavComment(request.audio);
    return {
      text: carried ?? `[${request.audio.length} bytes of ${request.mime_type}]`,
      language: request.language ?? 'en',
    };
  },

  async embed(_m, request) {
    return devEmbeddings(request);
  },

  async startVideo(_m, request, ctx): Promise<VideoProgress> {
    const upstreamId = `devvid_${digest(request.prompt).toString('hex').slice(0, 16)}`;
    await sleep(10, undefined, { signal: ctx.signal });
    const hash = digest(request.prompt);
    const frames = Array.from(
      { length: 6 },
      (_, i) =>
        [rgb(hash, i * 3), rgb(hash, (i * 3 + 9) % 30)] as [ReturnType<typeof rgb>, ReturnType<typeof rgb>],
    );
    const video = animatedPng(32, 32, frames, 200);
    return {
      status: 'completed',
      upstreamId,
      video: { b64_json: video.toString('base64'), mime_type: 'image/apng' },
    };
  },

  async pollVideo(_m, upstreamId): Promise<VideoProgress> {
    return { status: 'failed', upstreamId, message: 'dev videos complete when started; nothing to poll' };
  },
};
