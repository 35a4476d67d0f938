import type { paths } from './generated/gateway.ts';

/**
 * Provider connections (`/v1/ai/providers/*`): what an upsert takes, typed by the OpenAPI document,
 * what the list answers (restated from `services/ai/connections/actions.ts`, whose view is not a
 * named type), and the text forms of the console's form (header and model lines) turned into it.
 */

export type ConnectionBody =
  paths['/v1/ai/providers/upsert']['post']['requestBody']['content']['application/json'];
export type ConnectionKind = NonNullable<ConnectionBody['kind']>;
export type ConnectionPreset = NonNullable<ConnectionBody['preset']>;
type ModelBody = NonNullable<ConnectionBody['models']>[number];

/** A connection as `providers/list` shows it: secrets masked, model ids `<connection>/<model>`. */
export interface ConnectionView {
  id: string;
  kind: ConnectionKind;
  preset: ConnectionPreset | null;
  base_url: string;
  api_version?: string;
  /** Masked (`••••abcd`), or null when the connection has none. */
  api_key: string | null;
  /** Names with their values masked. */
  headers: Record<string, string>;
  options?: {
    auth?: 'bearer';
    region?: string;
    access_key_id?: string | null;
    secret_access_key?: string | null;
    session_token?: string | null;
  };
  discovered: boolean;
  models: {
    id: string;
    upstream_id: string;
    /** The catalog's modalities: `text`, `stream`, `chat` for a chat model, `embed` for embeddings. */
    modalities: string[];
    context_window?: number;
    max_output_tokens?: number;
  }[];
  updated_at: string;
}

const lines = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');

/** `Name: value`, one header a line (the value may hold colons). Throws on a line without a name. */
export function headersOf(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of lines(text)) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Error(`headers: "${line}" is not a "Name: value" line`);
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** A connection's model id without the `<connection>/` the catalog puts before it. */
export const ownModelId = (connectionId: string, catalogId: string) =>
  catalogId.startsWith(`${connectionId}/`) ? catalogId.slice(connectionId.length + 1) : catalogId;

/** The models of `connection` as the form's lines: `id`, or `id=upstream_id` when they differ. */
export function modelLines(connection: ConnectionView): string {
  return connection.models
    .map((model) => {
      const id = ownModelId(connection.id, model.id);
      return model.upstream_id === id ? id : `${id}=${model.upstream_id}`;
    })
    .join('\n');
}

/**
 * `id` or `id=upstream_id`, one model a line. A model `before` had keeps what the lines cannot say
 * (embeddings, context window, output cap): an upsert replaces the connection whole.
 */
export function modelsOf(text: string, before?: ConnectionView): ModelBody[] {
  const known = new Map(before?.models.map((model) => [ownModelId(before.id, model.id), model]));
  return lines(text).map((line): ModelBody => {
    const equals = line.indexOf('=');
    const id = (equals < 0 ? line : line.slice(0, equals)).trim();
    const upstreamId = equals < 0 ? undefined : line.slice(equals + 1).trim();
    const previous = known.get(id);
    return {
      id,
      ...(upstreamId ? { upstream_id: upstreamId } : {}),
      ...(previous
        ? {
            modalities: previous.modalities.includes('embed') ? ['embed'] : ['chat'],
            ...(previous.context_window === undefined ? {} : { context_window: previous.context_window }),
            ...(previous.max_output_tokens === undefined
              ? {}
              : { max_output_tokens: previous.max_output_tokens }),
          }
        : {}),
    };
  });
}
