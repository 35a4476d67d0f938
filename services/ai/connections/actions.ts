import { z } from 'zod';
import { commandHandler } from '../../../shared/command-handler.ts';
import { ApiError } from '../../../shared/errors.ts';
import { defineAction } from '../../../shared/http/action.ts';
import { mask } from '../../env/reader.ts';
import type { AiDeps } from '../deps.ts';
import type { Modality } from '../providers/types.ts';
import { CONNECTION_KINDS, CONNECTIONS_STREAM, type Connection, connectionsDecider } from './connection.ts';
import { AZURE_API_VERSION, PRESETS } from './providers.ts';
import { type ConnectionRecord, connectionsProjection } from './read-model.ts';

const admin = ['admin'] as const;
const id = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'a connection id: lower-case letters, digits and dashes, e.g. groq-eu');
const MODALITIES = ['chat', 'embed'] as const;

const UpsertInput = z.strictObject({
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
  models: z
    .array(
      z.strictObject({
        id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/, 'a model id: letters, digits, . _ : -'),
        upstream_id: z.string().min(1).max(300).optional(),
        modalities: z.array(z.enum(MODALITIES)).min(1).optional(),
      }),
    )
    .min(1, 'models: the models the connection serves')
    .max(500),
});

/** `chat` serves text, stream and chat completions; `embed` embeddings. */
const modalitiesOf = (asked: readonly (typeof MODALITIES)[number][]): Modality[] => [
  ...(asked.includes('chat') ? (['text', 'stream', 'chat'] as const) : []),
  ...(asked.includes('embed') ? (['embed'] as const) : []),
];

/** `/v1/ai/providers/*`: the upstreams admins connect, each a provider of the catalog of its own. */
export function connectionActions(deps: AiDeps) {
  const { gw } = deps;
  const connections = () => gw.projections.state(connectionsProjection).byId;
  const run = commandHandler(connectionsDecider, {
    events: gw.events,
    streamOf: () => CONNECTIONS_STREAM,
    readModels: gw.projections,
  });
  const view = (connection: ConnectionRecord) => ({
    id: connection.id,
    kind: connection.kind,
    preset: connection.preset,
    base_url: connection.baseUrl,
    ...(connection.apiVersion === null ? {} : { api_version: connection.apiVersion }),
    api_key:
      connection.encryptedApiKey === null ? null : mask(gw.secrets.decrypt(connection.encryptedApiKey)),
    models: connection.models.map((model) => ({
      id: `${connection.id}/${model.id}`,
      upstream_id: model.upstreamId,
      modalities: model.modalities,
    })),
    updated_at: connection.updated_at,
  });
  return [
    defineAction({
      service: 'ai',
      action: 'providers/list',
      method: 'GET',
      identities: admin,
      summary: 'The provider connections (keys masked)',
      input: z.strictObject({}),
      handler: () => ({ items: [...connections().values()].map(view) }),
    }),
    defineAction({
      service: 'ai',
      action: 'providers/upsert',
      method: 'POST',
      identities: admin,
      summary:
        'Connect an upstream (OpenAI, Azure OpenAI, any OpenAI-compatible server or preset): replaced whole',
      input: UpsertInput,
      handler: async (input, ctx) => {
        if (deps.catalog.providerIds().includes(input.id))
          throw new ApiError('validation_failed', `id: "${input.id}" is a built-in provider's`, {
            param: 'id',
          });
        const preset = input.preset === undefined ? undefined : PRESETS[input.preset]!;
        const kind = input.kind ?? preset?.kind;
        const baseUrl = input.base_url ?? preset?.baseUrl;
        if (kind === undefined)
          throw new ApiError('validation_failed', 'kind: or a preset', { param: 'kind' });
        if (baseUrl === undefined)
          throw new ApiError('validation_failed', 'base_url: or a preset', { param: 'base_url' });
        if (kind === 'anthropic' && input.models.some((model) => model.modalities?.includes('embed')))
          throw new ApiError('validation_failed', 'models: Anthropic has no embedding models', {
            param: 'models',
          });
        if (input.api_version !== undefined && kind !== 'azure_openai')
          throw new ApiError('validation_failed', 'api_version: for azure_openai connections only', {
            param: 'api_version',
          });
        const before = connections().get(input.id);
        const connection: Connection = {
          id: input.id,
          kind,
          preset: input.preset ?? null,
          baseUrl,
          encryptedApiKey:
            input.api_key === undefined
              ? (before?.encryptedApiKey ?? null)
              : gw.secrets.encrypt(input.api_key),
          apiVersion: kind === 'azure_openai' ? (input.api_version ?? AZURE_API_VERSION) : null,
          models: input.models.map((model) => ({
            id: model.id,
            upstreamId: model.upstream_id ?? model.id,
            modalities: modalitiesOf(model.modalities ?? ['chat']),
          })),
        };
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
