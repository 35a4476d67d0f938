import { canonicalJson } from '../../shared/canonical-json.ts';
import { sha256Hex } from '../../shared/crypto.ts';
import type { StoredEvent } from '../../shared/event-store/types.ts';

/** Hex characters of an event's SHA-256 a seal keeps: 64 bits, enough to tell an edited event apart. */
export const EVENT_DIGEST_LENGTH = 16;

/**
 * An event's digest: the first 16 hex characters of the SHA-256 of its canonical JSON, every field
 * included (where it is, what it is, who caused it, when). Canonical, so a PostgreSQL `jsonb` round
 * trip, which reorders object keys, digests the same.
 */
export function eventDigest(event: StoredEvent): string {
  const { position, streamId, revision, id, type, data, metadata, createdAt } = event;
  const fields = { position, streamId, revision, id, type, data, metadata, createdAt };
  return sha256Hex(canonicalJson(fields)).slice(0, EVENT_DIGEST_LENGTH);
}
