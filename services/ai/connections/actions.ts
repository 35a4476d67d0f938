import { z } from 'zod';
import { commandHandler } from '../../../shared/command-handler.ts';
import { ApiError } from '../../../shared/errors.ts';
import { defineAction } from '../../../shared/http/action.ts';
import { mask } from '../../env/reader.ts';
import type { AiDeps } from '../deps.ts';
import { AZURE_API_VERSION } from '../providers/azure-openai/api.ts';
import type { Modality } from '../providers/types.ts';
import {
  CONNECTION_KINDS,
  CONNECTIONS_STREAM,
  type Connection,
  type ConnectionKind,
  connectionsDecider,
} from './connection.ts';
import { bedrockRuntimeUrl, discoverModels, PRESETS } from './providers.ts';
import { type ConnectionRecord, connectionsProjection } from './read-model.ts';

const admin = ['admin'] as const;
const id = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'a connection id: lower-case letters, digits and dashes, e.g. groq-eu');
const MODALITIES = ['chat', 'embed'] as const;
const DISCOVERY_TIMEOUT_MS = 30_000;
const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}$/;
/** Headers the gateway sets itself or that belong to the connection, not to a call. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'content-type',
]);

const ModelInput = z.strictObject({
  id: z.string().regex(MODEL_ID, 'a model id: letters, digits, . _ : / -'),
  upstream_id: z.string().min(1).max(300).optional(),
  modalities: z.array(z.enum(MODALITIES)).min(1).optional(),
  context_window: z.number().int().positive().optional(),
  /** What a budget reserves for an answer that asks no cap. */
  max_output_tokens: z.number().int().positive().optional(),
});

export const ConnectionInput = z
  .strictObject({
    id,
    kind: z.enum(CONNECTION_KINDS).optional(),
    preset: z.enum(Object.keys(PRESETS) as [string, ...string[]]).optional(),
    base_url: z
      .url({ protocol: /^https?$/, message: 'base_url: an http(s) URL' })
      .max(2_000)
      .optional(),
    /** Kept encrypted with the master key; left out on an update, the key set before stays. */
    api_key: z.string().min(1).max(4_096).optional(),
    /** Azure OpenAI only: its `api-version` (default 2024-10-21). */
    api_version: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}(-preview)?$/, 'api_version: a date, e.g. 2024-10-21')
      .optional(),
    /** Sent with every call, kept encrypted; left out on an update, the headers set before stay. */
    headers: z
      .record(
        z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/, 'headers: a header name'),
        z
          .string()
          .max(4_096)
          .regex(/^[^\r\n]*$/, 'headers: a value on one line'),
      )
      .refine((headers) => Object.keys(headers).length <= 20, 'headers: at most 20')
      .superRefine((headers, check) => {
        for (const name of Object.keys(headers))
          if (RESERVED_HEADERS.has(name.toLowerCase()))
            check.addIssue({ code: 'custom', message: `headers: ${name} is set by the gateway itself` });
      })
      .optional(),
    options: z
      .strictObject({
        /** Amazon Bedrock: the AWS region, e.g. us-east-1. */
        region: z
          .string()
          .regex(/^[a-z]{2}(-[a-z]+)+-\d{1,2}$/, 'options.region: an AWS region, e.g. us-east-1')
          .optional(),
        /** Amazon Bedrock: a key pair to sign with (none: the standard AWS credential chain). */
        access_key_id: z
          .string()
          .regex(/^[A-Z0-9]{16,128}$/, 'options.access_key_id: an AWS access key id')
          .optional(),
        secret_access_key: z.string().min(1).max(256).optional(),
        session_token: z.string().min(1).max(4_096).optional(),
        /** Azure OpenAI: `bearer` sends the key as `Authorization: Bearer` (an Entra ID token). */
        auth: z.enum(['api_key', 'bearer']).optional(),
      })
      .optional(),
    /** Read the models from the upstream's own list (given `models` are added, and win by id). */
    discover: z.boolean().optional(),
    models: z.array(ModelInput).min(1, 'models: the models the connection serves').max(500).optional(),
  })
  .refine((input) => input.models !== undefined || input.discover === true, {
    message: 'models: the models the connection serves, or discover: true',
    path: ['models'],
  });
export type ConnectionInput = z.infer<typeof ConnectionInput>;

/** `chat` serves text, stream and chat completions; `embed` embeddings. */
const modalitiesOf = (asked: readonly (typeof MODALITIES)[number][]): Modality[] => [
  ...(asked.includes('chat') ? (['text', 'stream', 'chat'] as const) : []),
  ...(asked.includes('embed') ? (['embed'] as const) : []),
];

/** The base URL of a kind that has one everywhere (the others: a `base_url` or a preset). */
const defaultBaseUrl = (kind: ConnectionKind, region: string | undefined): string | undefined =>
  ({
    openai: PRESETS.openai!.baseUrl,
    anthropic: PRESETS.anthropic!.baseUrl,
    gemini: PRESETS.gemini!.baseUrl,
    bedrock: region === undefined ? undefined : bedrockRuntimeUrl(region),
    openai_compatible: undefined,
    azure_openai: undefined,
  })[kind];

const invalid = (param: string, message: string) =>
  new ApiError('validation_failed', `${param}: ${message}`, { param });

/** What only some kinds take, refused on the others so a typo never passes silently. */
function checkKind(kind: ConnectionKind, input: ConnectionInput): void {
  const { options = {} } = input;
  if (kind === 'anthropic' && input.models?.some((model) => model.modalities?.includes('embed')))
    throw invalid('models', 'Anthropic has no embedding models');
  if (input.api_version !== undefined && kind !== 'azure_openai')
    throw invalid('api_version', 'for azure_openai connections only');
  if (options.auth !== undefined && kind !== 'azure_openai')
    throw invalid('options.auth', 'for azure_openai connections only');
  const aws = [options.region, options.access_key_id, options.secret_access_key, options.session_token];
  if (kind !== 'bedrock' && aws.some((value) => value !== undefined))
    throw invalid('options', 'region and AWS keys are for bedrock connections only');
  if (kind === 'bedrock' && options.region === undefined)
    throw invalid('options.region', 'the AWS region of a bedrock connection, e.g. us-east-1');
  if ((options.access_key_id === undefined) !== (options.secret_access_key === undefined))
    throw invalid('options', 'access_key_id and secret_access_key together');
}

/** `/v1/ai/providers/*`: the upstreams admins connect, each a provider of the catalog of its own. */
export function connectionActions(deps: AiDeps) {
  const { gw } = deps;
  const connections = () => gw.projections.state(connectionsProjection).byId;
  const run = commandHandler(connectionsDecider, {
    events: gw.events,
    streamOf: () => CONNECTIONS_STREAM,
    readModels: gw.projections,
  });
  const shown = (sealed: string | null | undefined) =>
    sealed === null || sealed === undefined ? null : mask(gw.secrets.decrypt(sealed));
  const view = (connection: ConnectionRecord) => ({
    id: connection.id,
    kind: connection.kind,
    preset: connection.preset,
    base_url: connection.baseUrl,
    ...(connection.apiVersion === null ? {} : { api_version: connection.apiVersion }),
    api_key: shown(connection.encryptedApiKey),
    headers: Object.fromEntries(
      Object.entries(openHeaders(connection.encryptedHeaders)).map(([name, value]) => [name, mask(value)]),
    ),
    ...(connection.bearer ? { options: { auth: 'bearer' } } : {}),
    ...(connection.bedrock
      ? {
          options: {
            region: connection.bedrock.region,
            access_key_id: connection.bedrock.accessKeyId,
            secret_access_key: shown(connection.bedrock.encryptedSecretAccessKey),
            session_token: shown(connection.bedrock.encryptedSessionToken),
          },
        }
      : {}),
    discovered: connection.discovered === true,
    models: connection.models.map((model) => ({
      id: `${connection.id}/${model.id}`,
      upstream_id: model.upstreamId,
      modalities: model.modalities,
      ...(model.contextWindow === undefined ? {} : { context_window: model.contextWindow }),
      ...(model.maxOutputTokens === undefined ? {} : { max_output_tokens: model.maxOutputTokens }),
    })),
    updated_at: connection.updated_at,
  });
  const openHeaders = (sealed: string | null | undefined): Record<string, string> =>
    sealed ? (JSON.parse(gw.secrets.decrypt(sealed)) as Record<string, string>) : {};
  const encrypt = (value: string | undefined, before: string | null | undefined) =>
    value === undefined ? (before ?? null) : gw.secrets.encrypt(value);

  /** The connection an upsert describes, its secrets encrypted, those left out kept from `before`. */
  function connectionOf(input: ConnectionInput, before: Connection | undefined): Connection {
    const preset = input.preset === undefined ? undefined : PRESETS[input.preset]!;
    const kind = input.kind ?? preset?.kind;
    if (kind === undefined) throw invalid('kind', 'or a preset');
    if (preset && preset.kind !== kind)
      throw invalid('preset', `${input.preset} is a ${preset.kind} service, not ${kind}`);
    checkKind(kind, input);
    const { options = {} } = input;
    const baseUrl = input.base_url ?? preset?.baseUrl ?? defaultBaseUrl(kind, options.region);
    if (baseUrl === undefined) throw invalid('base_url', `the URL of the ${kind} server, or a preset`);
    const sameKeyPair = options.access_key_id === undefined && before?.bedrock;
    return {
      id: input.id,
      kind,
      preset: input.preset ?? null,
      baseUrl,
      encryptedApiKey: encrypt(input.api_key, before?.encryptedApiKey),
      apiVersion: kind === 'azure_openai' ? (input.api_version ?? AZURE_API_VERSION) : null,
      ...(options.auth === 'bearer' ? { bearer: true } : {}),
      encryptedHeaders:
        input.headers === undefined
          ? (before?.encryptedHeaders ?? null)
          : Object.keys(input.headers).length === 0
            ? null
            : gw.secrets.encrypt(JSON.stringify(input.headers)),
      bedrock:
        kind === 'bedrock'
          ? {
              region: options.region!,
              accessKeyId: options.access_key_id ?? (sameKeyPair ? sameKeyPair.accessKeyId : null),
              encryptedSecretAccessKey: encrypt(
                options.secret_access_key,
                sameKeyPair ? sameKeyPair.encryptedSecretAccessKey : null,
              ),
              encryptedSessionToken: encrypt(
                options.session_token,
                sameKeyPair ? sameKeyPair.encryptedSessionToken : null,
              ),
            }
          : null,
      models: (input.models ?? []).map((model) => ({
        id: model.id,
        upstreamId: model.upstream_id ?? model.id,
        modalities: modalitiesOf(model.modalities ?? ['chat']),
        ...(model.context_window === undefined ? {} : { contextWindow: model.context_window }),
        ...(model.max_output_tokens === undefined ? {} : { maxOutputTokens: model.max_output_tokens }),
      })),
    };
  }

  /** The upstream's own list, the models given added over it (by id). */
  async function discovered(connection: Connection, signal: AbortSignal): Promise<Connection> {
    const listed = await discoverModels(deps.upstream, gw.secrets, connection, {
      env: deps.env,
      signal: AbortSignal.any([signal, AbortSignal.timeout(DISCOVERY_TIMEOUT_MS)]),
      tenant: 'admin',
    });
    const given = new Set(connection.models.map((model) => model.id));
    const models = listed
      .filter((model) => MODEL_ID.test(model.id) && !given.has(model.id))
      .slice(0, 2_000)
      .map((model) => ({ ...model, upstreamId: model.id }));
    if (models.length + given.size === 0)
      throw new ApiError('upstream_error', `the upstream of ${connection.id} lists no models`);
    return { ...connection, discovered: true, models: [...connection.models, ...models] };
  }

  return [
    defineAction({
      service: 'ai',
      action: 'providers/list',
      method: 'GET',
      identities: admin,
      summary: 'The provider connections (keys and header values masked)',
      input: z.strictObject({}),
      handler: () => ({ items: [...connections().values()].map(view) }),
    }),
    defineAction({
      service: 'ai',
      action: 'providers/upsert',
      method: 'POST',
      identities: admin,
      summary:
        'Connect an upstream (OpenAI, Azure OpenAI, Anthropic, Gemini, Bedrock, any OpenAI-compatible server or preset): replaced whole',
      input: ConnectionInput,
      handler: async (input, ctx) => {
        if (deps.catalog.providerIds().includes(input.id))
          throw invalid('id', `"${input.id}" is a built-in provider's`);
        const described = connectionOf(input, connections().get(input.id));
        const connection = input.discover ? await discovered(described, ctx.signal) : described;
        await run({ type: 'SetConnection', connection }, ctx.metadata);
        return view(connections().get(input.id)!);
      },
    }),
    defineAction({
      service: 'ai',
      action: 'providers/remove',
      method: 'POST',
      identities: admin,
      summary: 'Remove a provider connection: its models leave the catalog',
      input: z.strictObject({ id }),
      handler: async (input, ctx) => {
        await run({ type: 'RemoveConnection', id: input.id }, ctx.metadata);
        return { id: input.id, removed: true };
      },
    }),
  ];
}
