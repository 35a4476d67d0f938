import { describe, it } from 'vitest';
import { deciderSpec } from '../../shared/decider-spec.ts';
import { type StudioCommand, type StudioEvent, studioDecider } from './studio.ts';

const spec = deciderSpec(studioDecider);
const id = 'acme';
const created: StudioEvent = { type: 'StudioCreated', data: { studioId: id, name: 'Acme' } };
const issue = (
  tokenId: string,
  models: readonly string[] | null = null,
): Extract<StudioCommand, { type: 'IssueToken' }> => ({
  type: 'IssueToken',
  studioId: id,
  tokenId,
  name: 'ci',
  prefix: 'stk_abcd',
  tokenHash: 'a'.repeat(64),
  expiresAt: '2030-01-01T00:00:00.000Z',
  models,
});
const issued = (tokenId: string, models: readonly string[] | null = null): StudioEvent => {
  const { type: _type, ...data } = issue(tokenId, models);
  return { type: 'TokenIssued', data };
};
const revoked = (tokenId: string, reason: 'revoked' | 'studio_removed' = 'revoked'): StudioEvent => ({
  type: 'TokenRevoked',
  data: { studioId: id, tokenId, reason },
});

describe('studio decider: tokens', () => {
  it('issues a token that carries only its hash', () => {
    spec
      .given([created])
      .when(issue('t1'))
      .thenEmits([issued('t1')]);
  });

  it('issues a token limited to some models, which its event names', () => {
    spec
      .given([created])
      .when(issue('t1', ['dev/*', 'openai/gpt-4o-mini']))
      .thenEmits([issued('t1', ['dev/*', 'openai/gpt-4o-mini'])]);
  });

  it('issues a token allowed some MCP tools, which its event names; without them the event has none', () => {
    const withTools = { ...issue('t1'), tools: ['files__*', 'web__echo'] };
    const { type: _type, ...data } = withTools;
    spec
      .given([created])
      .when(withTools)
      .thenEmits([{ type: 'TokenIssued', data }]);
    spec
      .given([created])
      .when(issue('t2'))
      .thenEmits([issued('t2')]);
  });

  it('a token issued before tokens could be limited (no models in its event) is revoked like any other', () => {
    const { models: _models, ...old } = issue('t1');
    const { type: _type, ...data } = old;
    spec
      .given([created, { type: 'TokenIssued', data }])
      .when({ type: 'RevokeToken', studioId: id, tokenId: 't1' })
      .thenEmits([revoked('t1')]);
  });

  it('issues tokens for a paused studio (they answer studio_paused until it is activated)', () => {
    spec
      .given([created, { type: 'StudioPaused', data: { studioId: id, reason: null } }])
      .when(issue('t1'))
      .thenEmits([issued('t1')]);
  });

  it('refuses a token for an unknown studio', () => {
    spec.given([]).when(issue('t1')).thenFails('not_found');
  });

  it('refuses a token for a removed studio', () => {
    spec
      .given([created, { type: 'StudioRemoved', data: { studioId: id } }])
      .when(issue('t1'))
      .thenFails('conflict');
  });

  it('refuses to issue the same token id twice', () => {
    spec
      .given([created, issued('t1')])
      .when(issue('t1'))
      .thenFails('conflict');
  });

  it('revokes a live token', () => {
    spec
      .given([created, issued('t1')])
      .when({ type: 'RevokeToken', studioId: id, tokenId: 't1' })
      .thenEmits([revoked('t1')]);
  });

  it('revoking a revoked token succeeds without a new event', () => {
    spec
      .given([created, issued('t1'), revoked('t1')])
      .when({ type: 'RevokeToken', studioId: id, tokenId: 't1' })
      .thenEmits([]);
  });

  it('revoking a token of a removed studio changes nothing: removal revoked it', () => {
    spec
      .given([
        created,
        issued('t1'),
        { type: 'StudioRemoved', data: { studioId: id } },
        revoked('t1', 'studio_removed'),
      ])
      .when({ type: 'RevokeToken', studioId: id, tokenId: 't1' })
      .thenEmits([]);
  });

  it('answers not_found for a token the studio never issued', () => {
    spec
      .given([created, issued('t1')])
      .when({ type: 'RevokeToken', studioId: id, tokenId: 't2' })
      .thenFails('not_found');
  });
});
