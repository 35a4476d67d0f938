import type { StudioEvent } from '../services/studios/studio.ts';
import { defineProjection } from '../shared/projections/projection.ts';
import { type Entries, entriesOf, mapOf } from '../shared/projections/snapshot.ts';

/** A user token as admins see it. Its secret is never kept, only the hash in `byHash`. */
export interface TokenRecord {
  id: string;
  studio_id: string;
  name: string;
  prefix: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  /** The models it may call (ids or `*` patterns); null: every model. */
  models: readonly string[] | null;
  /** The MCP tools it may call through `/v1/mcp` (names or `*` patterns); empty: none. */
  tools: readonly string[];
}

export interface TokensState {
  byId: Map<string, TokenRecord>;
  /** SHA-256 of the token (hex) → token id: authentication is one lookup in memory. */
  byHash: Map<string, string>;
}

export const tokensProjection = defineProjection<TokensState, StudioEvent>({
  name: 'tokens',
  // 3: records carry `models`; 4: and `tools`.
  schemaVersion: 4,
  handles: ['TokenIssued', 'TokenRevoked'],
  initialState: () => ({ byId: new Map(), byHash: new Map() }),
  toSnapshot: (state) => ({ byId: entriesOf(state.byId), byHash: entriesOf(state.byHash) }),
  fromSnapshot(snapshot) {
    const { byId, byHash } = snapshot as { byId: Entries<TokenRecord>; byHash: Entries<string> };
    return { byId: mapOf(byId, 'tokens'), byHash: mapOf(byHash, 'tokens') };
  },
  apply(state, event) {
    switch (event.type) {
      case 'TokenIssued': {
        const { tokenId, studioId, name, prefix, tokenHash, expiresAt, models, tools } = event.data;
        state.byId.set(tokenId, {
          id: tokenId,
          studio_id: studioId,
          name,
          prefix,
          created_at: event.createdAt,
          expires_at: expiresAt,
          revoked_at: null,
          // Tokens issued before they could be limited have no `models`: every model.
          models: models ? [...models] : null,
          tools: tools ? [...tools] : [],
        });
        state.byHash.set(tokenHash, tokenId);
        return;
      }
      case 'TokenRevoked': {
        const token = state.byId.get(event.data.tokenId);
        if (token && token.revoked_at === null) token.revoked_at = event.createdAt;
        return;
      }
      default:
        return;
    }
  },
});
