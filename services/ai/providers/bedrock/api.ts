import { z } from 'zod';
import { ApiError, messageOf } from '../../../../shared/errors.ts';
import { type UpstreamClient, type UpstreamResponse, upstreamMessage } from '../../upstream.ts';
import { readJson } from '../body.ts';
import { trimSlashes } from '../openai/wire.ts';
import type { CallContext, Modality, Provider, UpstreamModel } from '../types.ts';
import { readEventStream } from './event-stream.ts';
import { type AwsCredentials, signRequest } from './sign.ts';
import { type ConverseResponse, fromConverse, streamTranslator, toConverse } from './translate.ts';

export { awsDefaultCredentials } from './credentials.ts';
export type { AwsCredentials } from './sign.ts';

/** Where a Bedrock connection's upstream is and how it is reached, read at each call. */
export interface BedrockEndpoint {
  region: string;
  /** The runtime endpoint; default https://bedrock-runtime.<region>.amazonaws.com */
  baseUrl?: string;
  /** The control-plane endpoint for listing models; default https://bedrock.<region>.amazonaws.com */
  controlUrl?: string;
  /** A Bedrock API key: sent as `Authorization: Bearer`, no signing. */
  apiKey(): string | undefined;
  /** Credentials to sign with when there is no API key: the connection's, else the standard AWS chain (env AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN, profile, container/instance roles). */
  credentials(): Promise<AwsCredentials>;
  headers(): Record<string, string>;
  baseUrlVariable: string;
}

/** Both Bedrock endpoints sign as service `bedrock`. */
const SERVICE = 'bedrock';

const runtimeUrl = (where: BedrockEndpoint) =>
  trimSlashes(where.baseUrl || `https://bedrock-runtime.${where.region}.amazonaws.com`);
const controlUrl = (where: BedrockEndpoint) =>
  trimSlashes(where.controlUrl || `https://bedrock.${where.region}.amazonaws.com`);

/** What listing answers, per model: only what discovery records is read. */
const ModelSummaries = z.object({
  modelSummaries: z.array(
    z.looseObject({
      modelId: z.string().min(1),
      inputModalities: z.array(z.string()).optional(),
      outputModalities: z.array(z.string()).optional(),
      responseStreamingSupported: z.boolean().nullish(),
    }),
  ),
});

function modalitiesOf(model: z.infer<typeof ModelSummaries>['modelSummaries'][number]): Modality[] {
  const output = model.outputModalities ?? [];
  const modalities: Modality[] = [];
  if (output.includes('TEXT'))
    modalities.push('text', ...(model.responseStreamingSupported ? (['stream'] as const) : []), 'chat');
  if (output.includes('EMBEDDING')) modalities.push('embed');
  return modalities;
}

/**
 * The calls of a connection to Amazon Bedrock: chat through the Converse API (ConverseStream for
 * streams, its binary event stream decoded as it arrives), translated from and to OpenAI's wire;
 * model discovery through the control plane. Requests are signed with SigV4 (service `bedrock`),
 * or carry a Bedrock API key as a bearer token.
 */
export function bedrockApi(
  upstream: UpstreamClient,
  where: BedrockEndpoint,
): Pick<Provider, 'chat' | 'chatStream'> & { listModels(ctx: CallContext): Promise<UpstreamModel[]> } {
  async function send(
    ctx: CallContext,
    url: URL,
    call: { method: 'GET' | 'POST'; json?: unknown; accept: string },
  ): Promise<{ response: UpstreamResponse; secrets: (string | undefined)[] }> {
    const body = call.json === undefined ? undefined : JSON.stringify(call.json);
    const headers: Record<string, string> = {
      ...where.headers(),
      accept: call.accept,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    };
    const apiKey = where.apiKey();
    let secrets: (string | undefined)[];
    let sent: Record<string, string>;
    if (apiKey) {
      secrets = [apiKey];
      sent = { ...headers, authorization: `Bearer ${apiKey}` };
    } else {
      let credentials: AwsCredentials;
      try {
        credentials = await where.credentials();
      } catch (error) {
        throw new ApiError('upstream_error', `no AWS credentials to sign with: ${messageOf(error)}`);
      }
      secrets = [credentials.secretAccessKey, credentials.sessionToken];
      sent = await signRequest({
        method: call.method,
        url,
        headers,
        ...(body === undefined ? {} : { body }),
        region: where.region,
        service: SERVICE,
        credentials,
      });
    }
    const response = await upstream.send({
      url: url.href,
      method: call.method,
      headers: sent,
      ...(body === undefined ? {} : { body }),
      signal: ctx.signal,
      secrets,
      tenant: ctx.tenant,
      baseUrlVariable: where.baseUrlVariable,
      ...(ctx.retries === undefined ? {} : { retries: ctx.retries }),
    });
    return { response, secrets };
  }

  /** `/model/{modelId}/<action>`: the id percent-encoded whole (`:` and `/` of ARNs included). */
  const modelUrl = (modelId: string, action: 'converse' | 'converse-stream') =>
    new URL(`${runtimeUrl(where)}/model/${encodeURIComponent(modelId)}/${action}`);

  return {
    async chat(m, request, ctx) {
      const { response } = await send(ctx, modelUrl(m.upstreamModel, 'converse'), {
        method: 'POST',
        json: toConverse(request),
        accept: 'application/json',
      });
      const answer = await readJson<ConverseResponse>(response, ctx.signal);
      if (!Array.isArray(answer?.output?.message?.content))
        throw new ApiError('upstream_error', 'the upstream answered a conversation without a message');
      return fromConverse(answer, m.id);
    },

    async chatStream(m, request, ctx) {
      const { response, secrets } = await send(ctx, modelUrl(m.upstreamModel, 'converse-stream'), {
        method: 'POST',
        json: toConverse(request),
        accept: 'application/vnd.amazon.eventstream',
      });
      const translate = streamTranslator(m.id, request.stream_options?.include_usage === true);
      return (async function* () {
        let stopped = false;
        for await (const frame of readEventStream(response, ctx.signal)) {
          if (frame.kind !== 'event') {
            const said = typeof frame.payload.message === 'string' ? frame.payload.message : '';
            throw new ApiError(
              'upstream_error',
              upstreamMessage(`${frame.name}: ${said || 'the upstream failed mid-answer'}`, secrets),
            );
          }
          if (frame.name === 'messageStop') stopped = true;
          yield* translate(frame.name, frame.payload);
        }
        if (!stopped) throw new ApiError('upstream_error', 'the upstream stream ended before messageStop');
      })();
    },

    async listModels(ctx) {
      const { response } = await send(ctx, new URL(`${controlUrl(where)}/foundation-models`), {
        method: 'GET',
        accept: 'application/json',
      });
      const listed = ModelSummaries.safeParse(await readJson<unknown>(response, ctx.signal));
      if (!listed.success)
        throw new ApiError('upstream_error', 'the upstream answered a model list without modelSummaries');
      return listed.data.modelSummaries.flatMap((model) => {
        const modalities = modalitiesOf(model);
        return modalities.length ? [{ id: model.modelId, modalities }] : [];
      });
    },
  };
}
