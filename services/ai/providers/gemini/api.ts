import { ApiError } from '../../../../shared/errors.ts';
import { decodeVector } from '../../embeddings/vectors.ts';
import { type UpstreamClient, type UpstreamResponse, upstreamMessage } from '../../upstream.ts';
import { errorMessageOf, readEvents, readJson } from '../body.ts';
import { trimSlashes } from '../openai/wire.ts';
import type { CallContext, Modality, Provider, UpstreamEndpoint, UpstreamModel } from '../types.ts';
import { streamTranslator } from './stream.ts';
import { fromGemini, toGemini } from './translate.ts';
import {
  BatchEmbedResponseSchema,
  GenerateContentResponseSchema,
  ListModelsResponseSchema,
  METHOD_MODALITIES,
  shapedAs,
} from './wire.ts';

export const GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com';

/** Gemini takes at most 100 texts in one batchEmbedContents call. */
const EMBED_BATCH = 100;
/** The most models one page of `models.list` holds. */
const PAGE_SIZE = 1000;
/** A bound on the pages followed, so an upstream that keeps answering a token cannot hold us. */
const MAX_PAGES = 50;

/** `gemini-2.5-flash` → `models/gemini-2.5-flash`; a name with its collection (`tunedModels/…`) stays. */
const resourceOf = (model: string) => (model.includes('/') ? model : `models/${model}`);
/** A resource name as a path, each segment encoded. */
const pathOf = (model: string) => resourceOf(model).split('/').map(encodeURIComponent).join('/');

/**
 * Google's Gemini API (`v1beta`) at `where`, its native wire: chat translated to and from
 * generateContent and streamGenerateContent (SSE), embeddings through batchEmbedContents, and the
 * models it lists. The key goes in `x-goog-api-key`, never in the query.
 */
export function geminiApi(
  upstream: UpstreamClient,
  where: UpstreamEndpoint,
): Pick<Provider, 'chat' | 'chatStream' | 'embed'> & {
  /** GET /v1beta/models (all pages): each model with its supportedGenerationMethods mapped to modalities
   *  (generateContent → ['text','stream','chat'], embedContent → ['embed']), inputTokenLimit → contextWindow,
   *  outputTokenLimit → maxOutputTokens, id without the `models/` prefix. */
  listModels(ctx: CallContext): Promise<UpstreamModel[]>;
} {
  const secrets = () => {
    const headers = where.headers();
    return { headers, secrets: [where.apiKey(), ...Object.values(headers)] };
  };

  const send = (ctx: CallContext, path: string, body?: object): Promise<UpstreamResponse> => {
    const apiKey = where.apiKey();
    const { headers, secrets: scrubbed } = secrets();
    return upstream.send({
      url: `${trimSlashes(where.baseUrl)}/v1beta/${path}`,
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        ...headers,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(apiKey ? { 'x-goog-api-key': apiKey } : {}),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: ctx.signal,
      secrets: scrubbed,
      tenant: ctx.tenant,
      baseUrlVariable: where.baseUrlVariable,
      ...(ctx.retries === undefined ? {} : { retries: ctx.retries }),
    });
  };

  async function* responses(response: UpstreamResponse, ctx: CallContext) {
    for await (const { data } of readEvents(response, ctx.signal)) {
      if (data === '[DONE]') continue;
      const failure = errorMessageOf(data);
      if (failure !== undefined)
        throw new ApiError('upstream_error', upstreamMessage(failure, secrets().secrets));
      yield shapedAs(GenerateContentResponseSchema, data, 'a stream event');
    }
  }

  return {
    async chat(m, request, ctx) {
      const response = await send(ctx, `${pathOf(m.upstreamModel)}:generateContent`, toGemini(request));
      const answer = shapedAs(
        GenerateContentResponseSchema,
        await readJson<unknown>(response, ctx.signal),
        'a generateContent response',
      );
      if (!answer.candidates?.length && !answer.promptFeedback?.blockReason)
        throw new ApiError('upstream_error', 'the upstream answered without candidates or a block reason');
      return fromGemini(answer, m.id);
    },

    async chatStream(m, request, ctx) {
      const response = await send(
        ctx,
        `${pathOf(m.upstreamModel)}:streamGenerateContent?alt=sse`,
        toGemini(request),
      );
      const translate = streamTranslator(m.id, request.stream_options?.include_usage === true);
      return (async function* () {
        for await (const event of responses(response, ctx)) yield* translate.event(event);
        yield* translate.end();
      })();
    },

    async embed(m, request, ctx) {
      const texts = request.input;
      if (!texts.every((input): input is string => typeof input === 'string'))
        throw new ApiError(
          'validation_failed',
          "Gemini embeds texts only: token ids (arrays of numbers) are OpenAI's tokenizer's, which Gemini does not read",
          { param: 'input' },
        );
      const model = resourceOf(m.upstreamModel);
      const vectors: ReturnType<typeof decodeVector>[] = [];
      for (let start = 0; start < texts.length; start += EMBED_BATCH) {
        const batch = texts.slice(start, start + EMBED_BATCH);
        const response = await send(ctx, `${pathOf(m.upstreamModel)}:batchEmbedContents`, {
          requests: batch.map((text) => ({
            model,
            content: { parts: [{ text }] },
            ...(request.dimensions === undefined ? {} : { outputDimensionality: request.dimensions }),
          })),
        });
        const { embeddings } = shapedAs(
          BatchEmbedResponseSchema,
          await readJson<unknown>(response, ctx.signal),
          'a batchEmbedContents response',
        );
        if (embeddings.length !== batch.length)
          throw new ApiError(
            'upstream_error',
            `the upstream answered ${embeddings.length} embeddings for ${batch.length} inputs`,
          );
        vectors.push(...embeddings.map((e) => decodeVector(e.values)));
      }
      // Gemini's embedding answers do not count tokens.
      return { vectors, inputTokens: undefined };
    },

    async listModels(ctx) {
      const models: UpstreamModel[] = [];
      let token: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const query = `pageSize=${PAGE_SIZE}${token ? `&pageToken=${encodeURIComponent(token)}` : ''}`;
        const response = await send(ctx, `models?${query}`);
        const listed = shapedAs(
          ListModelsResponseSchema,
          await readJson<unknown>(response, ctx.signal),
          'a models list',
        );
        for (const model of listed.models ?? []) {
          const modalities = [
            ...new Set((model.supportedGenerationMethods ?? []).flatMap((m) => METHOD_MODALITIES[m] ?? [])),
          ] as Modality[];
          // Models this API serves nothing of the gateway's through (Imagen's `predict`, live-only ones).
          if (modalities.length === 0) continue;
          models.push({
            id: model.name.replace(/^models\//, ''),
            modalities,
            ...(model.inputTokenLimit === undefined ? {} : { contextWindow: model.inputTokenLimit }),
            ...(model.outputTokenLimit === undefined ? {} : { maxOutputTokens: model.outputTokenLimit }),
          });
        }
        token = listed.nextPageToken || undefined;
        if (!token) return models;
      }
      throw new ApiError('upstream_error', `the upstream listed models over more than ${MAX_PAGES} pages`);
    },
  };
}
