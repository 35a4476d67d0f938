import { describe, expect, it } from 'vitest';
import type { StudioEvent } from '../services/studios/studio.ts';
import { foldThroughSnapshot } from '../shared/projections/fold.ts';
import { type TokensState, tokensProjection } from './tokens.ts';

/** Given these events of studio `acme`, the read model is (read back through a snapshot)… */
const given = (events: StudioEvent[]): TokensState =>
  foldThroughSnapshot(tokensProjection, events, () => 'studio-acme');

const issued = (tokenId: string, extra: { models?: readonly string[] | null } = {}): StudioEvent => ({
  type: 'TokenIssued',
  data: {
    studioId: 'acme',
    tokenId,
    name: tokenId,
    prefix: 'stk_abcd',
    tokenHash: `hash-${tokenId}`,
    expiresAt: null,
    ...extra,
  },
});

describe('tokens projection: models', () => {
  it('keeps the models a token may call', () => {
    const state = given([issued('t1', { models: ['dev/*', 'openai/gpt-4o'] })]);
    expect(state.byId.get('t1')?.models).toEqual(['dev/*', 'openai/gpt-4o']);
  });

  it('a token issued for every model has models null', () => {
    expect(given([issued('t1', { models: null })]).byId.get('t1')?.models).toBeNull();
  });

  it('a token issued before tokens could be limited (no models field) may call every model', () => {
    const state = given([issued('t1')]);
    expect(state.byId.get('t1')).toMatchObject({ id: 't1', models: null });
    expect(state.byHash.get('hash-t1')).toBe('t1');
  });
});
