import { type Decider, unknownCase } from '../../../shared/decider.ts';
import { DomainError } from '../../../shared/errors.ts';
import type { Modality } from '../providers/types.ts';

/** Every provider connection lives in the single `connections` stream. */
export const CONNECTIONS_STREAM = 'connections';

/** How a connection's upstream is spoken to. */
export const CONNECTION_KINDS = [
  'openai',
  'openai_compatible',
  'azure_openai',
  'anthropic',
  'gemini',
  'bedrock',
] as const;
export type ConnectionKind = (typeof CONNECTION_KINDS)[number];

/** A model a connection serves: `<connection id>/<id>` in the catalog, `upstreamId` at the upstream. */
export interface ConnectionModel {
  id: string;
  upstreamId: string;
  modalities: Modality[];
  contextWindow?: number;
  /** What a budget reserves for an answer that asks no cap. */
  maxOutputTokens?: number;
}

/** Amazon Bedrock: where, and the key pair to sign with (none: the standard AWS credential chain). */
export interface BedrockOptions {
  region: string;
  accessKeyId: string | null;
  encryptedSecretAccessKey: string | null;
  encryptedSessionToken: string | null;
}

/** An upstream an admin connected: its key encrypted with the master key, never kept in clear. */
export interface Connection {
  id: string;
  kind: ConnectionKind;
  /** The preset it was made from (`groq`, `ollama` …), if one. */
  preset: string | null;
  baseUrl: string;
  encryptedApiKey: string | null;
  /** Azure OpenAI's `api-version` (null for the other kinds). */
  apiVersion: string | null;
  /** Azure OpenAI: the key sent as `Authorization: Bearer` (an Entra ID token) rather than `api-key`. */
  bearer?: boolean;
  /** Headers sent with every call, encrypted as one JSON object (they often carry credentials). */
  encryptedHeaders?: string | null;
  bedrock?: BedrockOptions | null;
  /** The models were read from the upstream's own list when the connection was set. */
  discovered?: boolean;
  /** For Azure OpenAI each model's `upstreamId` is its deployment's name. */
  models: ConnectionModel[];
}

export type ConnectionEvent =
  | { type: 'ConnectionSet'; data: Connection }
  | { type: 'ConnectionRemoved'; data: { id: string } };

export type ConnectionCommand =
  | { type: 'SetConnection'; connection: Connection }
  | { type: 'RemoveConnection'; id: string };

export const CONNECTION_EVENT_TYPES = [
  'ConnectionSet',
  'ConnectionRemoved',
] as const satisfies readonly ConnectionEvent['type'][];

/** The connection ids that exist. */
export interface ConnectionsState {
  ids: ReadonlySet<string>;
}

function decide(command: ConnectionCommand, state: ConnectionsState): ConnectionEvent[] {
  switch (command.type) {
    case 'SetConnection':
      return [{ type: 'ConnectionSet', data: command.connection }];
    case 'RemoveConnection':
      if (!state.ids.has(command.id))
        throw new DomainError('not_found', `connection ${command.id} does not exist`);
      return [{ type: 'ConnectionRemoved', data: { id: command.id } }];
    default:
      return unknownCase('command', command);
  }
}

function evolve(state: ConnectionsState, event: ConnectionEvent): ConnectionsState {
  switch (event.type) {
    case 'ConnectionSet':
      return { ids: new Set(state.ids).add(event.data.id) };
    case 'ConnectionRemoved': {
      const ids = new Set(state.ids);
      ids.delete(event.data.id);
      return { ids };
    }
    default:
      return unknownCase('event', event);
  }
}

export const connectionsDecider: Decider<ConnectionCommand, ConnectionEvent, ConnectionsState> = {
  initialState: () => ({ ids: new Set() }),
  decide,
  evolve,
};
