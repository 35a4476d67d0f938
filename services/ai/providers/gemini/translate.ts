import { ApiError } from '../../../../shared/errors.ts';
import { completionId, nowSeconds } from '../../chat/ids.ts';
import type { ChatCompletion, ChatMessage, ChatRequest, ChatUsage, ToolCall } from '../../chat/wire.ts';
import { textOf } from '../../chat/wire.ts';
import { parseArguments } from '../anthropic/translate.ts';
import {
  finishReasonOf,
  type GeminiCandidate,
  type GeminiContent,
  type GeminiGenerationConfig,
  type GeminiPart,
  type GeminiRequest,
  type GeminiResponse,
  type GeminiUsage,
} from './wire.ts';

/** Translation between OpenAI's chat format (ours) and Gemini's generateContent, both ways. */

const ROLES = { user: 'user', assistant: 'model', tool: 'user', function: 'user' } as const;

/** The mime type of an image by its URL's extension; Gemini needs one for `fileData`. */
const IMAGE_TYPES: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  heif: 'image/heif',
};
const AUDIO_TYPES: Readonly<Record<string, string>> = { wav: 'audio/wav', mp3: 'audio/mp3' };

function imageTypeOf(url: string): string {
  let path = url;
  try {
    path = new URL(url).pathname;
  } catch {
    // not a URL: read its end as it is
  }
  const extension = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase();
  return (extension && IMAGE_TYPES[extension]) || 'image/jpeg';
}

/** A `data:` URL as inline bytes, anything else as a file Gemini fetches. */
function mediaPart(url: string, mimeType: (url: string) => string): GeminiPart {
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (data) return { inlineData: { mimeType: data[1]!, data: data[2]! } };
  return { fileData: { fileUri: url, mimeType: mimeType(url) } };
}

type ContentPart = Exclude<ChatMessage['content'], string | null | undefined>[number];

function partOf(part: ContentPart): GeminiPart[] {
  switch (part.type) {
    case 'text':
      return typeof part.text === 'string' && part.text ? [{ text: part.text }] : [];
    case 'image_url': {
      const image = part.image_url as { url?: unknown } | string | undefined;
      const url = typeof image === 'string' ? image : image?.url;
      return typeof url === 'string' && url ? [mediaPart(url, imageTypeOf)] : [];
    }
    case 'input_audio': {
      const audio = part.input_audio as { data?: unknown; format?: unknown } | undefined;
      if (typeof audio?.data !== 'string') return [];
      const format = String(audio.format ?? 'wav');
      return [{ inlineData: { mimeType: AUDIO_TYPES[format] ?? `audio/${format}`, data: audio.data } }];
    }
    case 'file': {
      const file = part.file as { file_data?: unknown } | undefined;
      return typeof file?.file_data === 'string'
        ? [mediaPart(file.file_data, () => 'application/octet-stream')]
        : [];
    }
    default:
      return [];
  }
}

function partsOf(content: ChatMessage['content']): GeminiPart[] {
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  return (content ?? []).flatMap(partOf);
}

/** Gemini wants an object as a function's response: a JSON object as it is, anything else wrapped. */
function responseOf(content: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(content);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // not JSON
  }
  return { result: content };
}

/**
 * Gemini 3 signs the reasoning behind a turn's function calls (on its first call) and refuses a
 * history whose calls come back without it. The signature rides along in the OpenAI tool call as
 * `extra_content.google.thought_signature`; a client that dropped it (or a history from elsewhere)
 * gets the value Google documents for calls it did not sign, so the request still validates.
 */
export const UNSIGNED_CALL = 'skip_thought_signature_validator';

function signatureOf(call: Readonly<Record<string, unknown>>): string | undefined {
  const google = (call.extra_content as { google?: { thought_signature?: unknown } } | undefined)?.google;
  return typeof google?.thought_signature === 'string' ? google.thought_signature : undefined;
}

function functionCallParts(calls: NonNullable<ChatMessage['tool_calls']>): GeminiPart[] {
  const parts = calls.map((call): GeminiPart => {
    const signature = signatureOf(call);
    return {
      functionCall: {
        name: call.function.name,
        args: parseArguments(call.function.arguments) as Record<string, unknown>,
      },
      ...(signature ? { thoughtSignature: signature } : {}),
    };
  });
  const first = parts[0];
  if (first && !parts.some((part) => 'thoughtSignature' in part))
    parts[0] = { ...first, thoughtSignature: UNSIGNED_CALL } as GeminiPart;
  return parts;
}

/** An OpenAI tool call for one of Gemini's function calls, its signature kept (see `UNSIGNED_CALL`). */
export function toolCallOf(id: string, call: AnsweredCall): ToolCall {
  return {
    id,
    type: 'function',
    function: { name: call.name, arguments: JSON.stringify(call.args) },
    ...(call.signature ? { extra_content: { google: { thought_signature: call.signature } } } : {}),
  };
}

/** Consecutive messages of one role merge: a turn's function responses must come together. */
function push(contents: GeminiContent[], role: GeminiContent['role'], parts: GeminiPart[]): void {
  if (parts.length === 0) return;
  const last = contents.at(-1);
  if (last?.role === role) last.parts.push(...parts);
  else contents.push({ role, parts });
}

function toolConfigOf(request: ChatRequest): GeminiRequest['toolConfig'] {
  const choice = request.tool_choice as string | { function?: { name?: string } } | null | undefined;
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  if (typeof choice === 'object' && choice?.function?.name)
    return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } };
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  return undefined;
}

function generationConfigOf(request: ChatRequest): GeminiGenerationConfig {
  const number = (value: unknown) => (typeof value === 'number' ? value : undefined);
  const stop = request.stop as string | string[] | null | undefined;
  const format = request.response_format as
    | { type?: string; json_schema?: { schema?: unknown } }
    | null
    | undefined;
  const json = format?.type === 'json_object' || format?.type === 'json_schema';
  const config: GeminiGenerationConfig = {
    temperature: number(request.temperature),
    topP: number(request.top_p),
    maxOutputTokens: number(request.max_completion_tokens ?? request.max_tokens),
    stopSequences: stop?.length ? (Array.isArray(stop) ? stop : [stop]) : undefined,
    candidateCount: number(request.n),
    seed: number(request.seed),
    presencePenalty: number(request.presence_penalty),
    frequencyPenalty: number(request.frequency_penalty),
    responseMimeType: json ? 'application/json' : undefined,
    responseJsonSchema: format?.type === 'json_schema' ? format.json_schema?.schema : undefined,
  };
  return Object.fromEntries(Object.entries(config).filter(([, v]) => v !== undefined));
}

export function toGemini(request: ChatRequest): GeminiRequest {
  const system: string[] = [];
  const contents: GeminiContent[] = [];
  /** Tool call ids → the function's name: Gemini names a function's response, OpenAI gives the call's id. */
  const calledNames = new Map<string, string>();
  for (const message of request.messages) {
    switch (message.role) {
      case 'system':
      case 'developer': {
        const text = textOf(message.content);
        if (text) system.push(text);
        break;
      }
      case 'user':
        push(contents, ROLES.user, partsOf(message.content));
        break;
      case 'assistant':
        for (const call of message.tool_calls ?? []) calledNames.set(call.id, call.function.name);
        push(contents, ROLES.assistant, [
          ...partsOf(message.content),
          ...functionCallParts(message.tool_calls ?? []),
        ]);
        break;
      case 'tool':
      case 'function': {
        const name =
          (message.tool_call_id ? calledNames.get(message.tool_call_id) : undefined) ?? message.name;
        if (!name)
          throw new ApiError(
            'validation_failed',
            `the tool message for ${message.tool_call_id ?? 'no tool_call_id'} answers no earlier tool call: Gemini needs the function's name`,
          );
        push(contents, ROLES[message.role], [
          { functionResponse: { name, response: responseOf(textOf(message.content)) } },
        ]);
        break;
      }
    }
  }
  const tools = request.tools ?? [];
  const toolConfig = tools.length ? toolConfigOf(request) : undefined;
  const generationConfig = generationConfigOf(request);
  return {
    contents,
    ...(system.length ? { systemInstruction: { parts: system.map((text) => ({ text })) } } : {}),
    ...(tools.length
      ? {
          tools: [
            {
              functionDeclarations: tools.map((t) => ({
                name: t.function.name,
                ...(t.function.description ? { description: t.function.description } : {}),
                ...(t.function.parameters === undefined
                  ? {}
                  : { parametersJsonSchema: t.function.parameters }),
              })),
            },
          ],
        }
      : {}),
    ...(toolConfig ? { toolConfig } : {}),
    ...(Object.keys(generationConfig).length ? { generationConfig } : {}),
  };
}

export function chatUsage(usage: GeminiUsage | undefined): ChatUsage {
  const prompt = usage?.promptTokenCount ?? 0;
  const completion = (usage?.candidatesTokenCount ?? 0) + (usage?.thoughtsTokenCount ?? 0);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: usage?.totalTokenCount ?? prompt + completion,
  };
}

interface AnsweredCall {
  name: string;
  args: Record<string, unknown>;
  signature?: string;
}

/** A candidate's answer text (thought summaries left out) and its function calls. */
export function answerOf(candidate: GeminiCandidate): { text: string; calls: AnsweredCall[] } {
  const parts = candidate.content?.parts ?? [];
  return {
    text: parts.map((p) => (p.thought || typeof p.text !== 'string' ? '' : p.text)).join(''),
    calls: parts.flatMap((p) =>
      p.functionCall
        ? [
            {
              name: p.functionCall.name,
              args: p.functionCall.args ?? {},
              ...(p.thoughtSignature ? { signature: p.thoughtSignature } : {}),
            },
          ]
        : [],
    ),
  };
}

/** Ids for the calls of one answer, `call_0`, `call_1`…: Gemini's calls have none. */
export function callIds() {
  let next = 0;
  return () => `call_${next++}`;
}

export function fromGemini(response: GeminiResponse, model: string): ChatCompletion {
  const nextId = callIds();
  const candidates = response.candidates ?? [];
  const choices: ChatCompletion['choices'] = candidates.map((candidate, position) => {
    const { text, calls } = answerOf(candidate);
    const toolCalls = calls.map((call) => toolCallOf(nextId(), call));
    return {
      index: candidate.index ?? position,
      message: {
        role: 'assistant',
        content: text || (toolCalls.length ? null : ''),
        ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
      },
      finish_reason: finishReasonOf(candidate.finishReason, toolCalls.length > 0),
    };
  });
  return {
    id: completionId(),
    object: 'chat.completion',
    created: nowSeconds(),
    model,
    // A blocked prompt has no candidates: an empty, filtered answer rather than an error.
    choices: choices.length
      ? choices
      : [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'content_filter' }],
    usage: chatUsage(response.usageMetadata),
  };
}
