import { z } from 'zod';
import { ApiError } from '../../../../shared/errors.ts';
import type { Modality } from '../types.ts';

/**
 * Google's Gemini API (`v1beta`) as this provider speaks it: the request shapes it sends, and
 * schemas for what it reads back. Answers are loose objects: Google adds fields often, and only
 * what the translation reads is checked.
 */

export type GeminiPart =
  | { text: string }
  | { inlineData: { mimeType: string; data: string } }
  | { fileData: { mimeType: string; fileUri: string } }
  | { functionCall: { name: string; args: Record<string, unknown> }; thoughtSignature?: string }
  | { functionResponse: { name: string; response: Record<string, unknown> } };

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  /** JSON Schema, as OpenAI's tools carry it (Gemini's `parameters` takes its own OpenAPI subset only). */
  parametersJsonSchema?: unknown;
}

export interface GeminiGenerationConfig {
  temperature?: number;
  topP?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  candidateCount?: number;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseMimeType?: string;
  /** JSON Schema, as OpenAI's `json_schema` carries it (Gemini's `responseSchema` takes its own subset only). */
  responseJsonSchema?: unknown;
}

export interface GeminiRequest {
  contents: GeminiContent[];
  systemInstruction?: { parts: { text: string }[] };
  tools?: { functionDeclarations: GeminiFunctionDeclaration[] }[];
  toolConfig?: {
    functionCallingConfig: { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] };
  };
  generationConfig?: GeminiGenerationConfig;
}

const PartSchema = z.looseObject({
  text: z.string().optional(),
  /** A thought summary, not part of the answer. */
  thought: z.boolean().optional(),
  /** Gemini 3 signs the reasoning behind a function call: the call must come back with it. */
  thoughtSignature: z.string().optional(),
  functionCall: z
    .looseObject({ name: z.string(), args: z.record(z.string(), z.unknown()).nullish() })
    .optional(),
});

const count = z.number().int().nonnegative().optional();
export const UsageMetadataSchema = z.looseObject({
  promptTokenCount: count,
  candidatesTokenCount: count,
  thoughtsTokenCount: count,
  totalTokenCount: count,
});

export const CandidateSchema = z.looseObject({
  index: z.number().int().nonnegative().optional(),
  content: z.looseObject({ parts: z.array(PartSchema).optional() }).optional(),
  finishReason: z.string().optional(),
});

export const GenerateContentResponseSchema = z.looseObject({
  candidates: z.array(CandidateSchema).optional(),
  promptFeedback: z.looseObject({ blockReason: z.string().optional() }).optional(),
  usageMetadata: UsageMetadataSchema.optional(),
});

export type GeminiCandidate = z.infer<typeof CandidateSchema>;
export type GeminiUsage = z.infer<typeof UsageMetadataSchema>;
export type GeminiResponse = z.infer<typeof GenerateContentResponseSchema>;

export const ListModelsResponseSchema = z.looseObject({
  models: z
    .array(
      z.looseObject({
        name: z.string(),
        supportedGenerationMethods: z.array(z.string()).optional(),
        inputTokenLimit: z.number().int().positive().optional(),
        outputTokenLimit: z.number().int().positive().optional(),
      }),
    )
    .optional(),
  nextPageToken: z.string().optional(),
});

export const BatchEmbedResponseSchema = z.looseObject({
  embeddings: z.array(z.looseObject({ values: z.unknown() })),
});

/** `value` as `schema` says, or a 502 naming what the upstream answered. */
export function shapedAs<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new ApiError('upstream_error', `the upstream answered ${what} not shaped as Gemini's`);
  return parsed.data;
}

/** Gemini's finish reasons → OpenAI's; any other (OTHER, LANGUAGE, unknown ones) is `stop`. */
export const FINISH_REASONS: Readonly<Record<string, string>> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  SPII: 'content_filter',
  IMAGE_SAFETY: 'content_filter',
  // The model meant to call a function but wrote an invalid call: nothing usable came, yet nothing
  // was filtered either and the exchange itself succeeded. An empty `stop` answer lets the caller
  // ask again; an error would break a stream whose first chunks are already out.
  MALFORMED_FUNCTION_CALL: 'stop',
};

/** OpenAI's finish reason for a candidate; one that called functions (and was not cut) is `tool_calls`. */
export function finishReasonOf(reason: string | undefined, calledFunctions: boolean): string {
  const mapped = (reason && FINISH_REASONS[reason]) || 'stop';
  return calledFunctions && mapped === 'stop' ? 'tool_calls' : mapped;
}

/** A model's `supportedGenerationMethods` → what the gateway can call it for. */
export const METHOD_MODALITIES: Readonly<Record<string, readonly Modality[]>> = {
  generateContent: ['text', 'stream', 'chat'],
  embedContent: ['embed'],
  batchEmbedContents: ['embed'],
};
