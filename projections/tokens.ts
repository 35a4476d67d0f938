import type { StudioEvent } from '../services/studios/studio.ts';
import { defineProjection } from './projection.ts';

/** A user token as admins see it. Its secret is never kept, only the hash in `byHash`. */
export interface TokenRecord {
  id: string;
  studio_id: string;
  name: string;
  prefix: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
}

export interface TokensState {
  byId: Record<string, TokenRecord>;
  /** SHA-256 of the token (hex) → token id: authentication is one lookup in memory. */
  byHash: Record<string, string>;
}

export const tokensProjection = defineProjection<TokensState, StudioEvent>({
  name: 'tokens',
  version: 1,
  handles: ['TokenIssued', 'TokenRevoked'],
  initialState: () => ({ byId: {}, byHash: {} }),
  apply(state, event) {
    switch (event.type) {
      case 'TokenIssued': {
        const { tokenId, studioId, name, prefix, tokenHash, expiresAt } = event.data;
        state.byId[tokenId] = {
          id: tokenId,
          studio_id: studioId,
          name,
          prefix,
          created_at: event.createdAt,
          expires_at: expiresAt,
          revoked_at: null,
        };
        state.byHash[tokenHash] = tokenId;
        return;
      }
      case 'TokenRevoked': {
        const token = state.byId[event.data.tokenId];
        if (token && token.revoked_at === null) token.revoked_at = event.createdAt;
        return;
      }
      default:
        return;
    }
  },
});
