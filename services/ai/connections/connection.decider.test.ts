import { describe, it } from 'vitest';
import { deciderSpec } from '../../../shared/decider-spec.ts';
import { type Connection, connectionsDecider } from './connection.ts';

const spec = deciderSpec(connectionsDecider);
const groq: Connection = {
  id: 'groq-eu',
  kind: 'openai_compatible',
  preset: 'groq',
  baseUrl: 'https://api.groq.com/openai/v1',
  encryptedApiKey: 'v1.iv.tag.body',
  apiVersion: null,
  models: [{ id: 'llama', upstreamId: 'llama-3.1-8b', modalities: ['text', 'stream', 'chat'] }],
};

describe('connections decider', () => {
  it('sets a connection, replacing one of the same id whole', () => {
    spec
      .given([])
      .when({ type: 'SetConnection', connection: groq })
      .thenEmits([{ type: 'ConnectionSet', data: groq }]);
    const moved = { ...groq, baseUrl: 'https://eu.groq.example/v1' };
    spec
      .given([{ type: 'ConnectionSet', data: groq }])
      .when({ type: 'SetConnection', connection: moved })
      .thenEmits([{ type: 'ConnectionSet', data: moved }]);
  });

  it('removes a connection that exists; one that does not is not found', () => {
    spec
      .given([{ type: 'ConnectionSet', data: groq }])
      .when({ type: 'RemoveConnection', id: 'groq-eu' })
      .thenEmits([{ type: 'ConnectionRemoved', data: { id: 'groq-eu' } }]);
    spec
      .given([
        { type: 'ConnectionSet', data: groq },
        { type: 'ConnectionRemoved', data: { id: 'groq-eu' } },
      ])
      .when({ type: 'RemoveConnection', id: 'groq-eu' })
      .thenFails('not_found');
  });
});
