import { secretEquals, sha256Hex, TOKEN_PREFIX } from '../crypto.ts';
import { ApiError } from '../errors.ts';

export type Identity =
  | { kind: 'guest' }
  | { kind: 'admin' }
  | {
      kind: 'user';
      tokenId: string;
      studioId: string;
      /** The models this token may call (ids or `*` patterns, shared/model-patterns.ts); null: every model. */
      models: readonly string[] | null;
    };

export type IdentityKind = Identity['kind'];

/**
 * What authentication needs to know about a token; answered from memory, never from the database.
 * When that memory cannot be trusted (its read models stopped following the log), `findByHash`
 * throws 503 `unavailable` instead of answering from it: authentication fails closed.
 */
export interface TokenLookup {
  /** The token with this SHA-256, its studio's status, or undefined when no such token was issued. */
  findByHash(hash: string):
    | {
        tokenId: string;
        studioId: string;
        revoked: boolean;
        expiresAt: string | null;
        studioStatus: string;
        models: readonly string[] | null;
      }
    | undefined;
}

/** Resolves the `Authorization: Bearer …` header into an identity: the admin key, a user token, or none (a guest). */
export class Authenticator {
  constructor(
    private readonly adminKey: string,
    private readonly tokens: TokenLookup,
  ) {}

  identify(authorization: string | undefined, now = Date.now()): Identity {
    if (authorization === undefined || authorization === '') return { kind: 'guest' };
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match) throw new ApiError('unauthenticated', 'the Authorization header must be "Bearer <token>"');
    return this.identifyCredential(match[1]!, now);
  }

  /** The credential itself, as a dialect's own header carries it (`x-api-key`). */
  identifyCredential(credential: string, now = Date.now()): Identity {
    if (!credential.startsWith(TOKEN_PREFIX)) {
      if (secretEquals(credential, this.adminKey)) return { kind: 'admin' };
      throw new ApiError('unauthenticated', 'unknown credential');
    }
    const token = this.tokens.findByHash(sha256Hex(credential));
    if (!token) throw new ApiError('unauthenticated', 'unknown token');
    if (token.revoked) throw new ApiError('unauthenticated', 'this token has been revoked');
    if (token.expiresAt !== null && Date.parse(token.expiresAt) <= now) {
      throw new ApiError('unauthenticated', 'this token has expired');
    }
    if (token.studioStatus === 'removed')
      throw new ApiError('unauthenticated', 'the studio of this token was removed');
    if (token.studioStatus === 'paused')
      throw new ApiError('studio_paused', 'the studio of this token is paused');
    return { kind: 'user', tokenId: token.tokenId, studioId: token.studioId, models: token.models };
  }
}

export function actorOf(identity: Identity): string {
  switch (identity.kind) {
    case 'guest':
      return 'guest';
    case 'admin':
      return 'admin';
    case 'user':
      return `token:${identity.tokenId}`;
    default: {
      const unknown: never = identity;
      throw new Error(`unknown identity ${JSON.stringify(unknown)}`);
    }
  }
}
