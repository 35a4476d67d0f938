import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import type { ApiError } from '../errors.ts';
import type { Authenticator, Identity } from './identity.ts';

/**
 * How an action that serves another API's wire format (Anthropic's Messages API) takes its
 * credential and answers its errors, so that API's own clients work unchanged. The gateway reads it
 * before it authenticates, so a refused credential is answered in the dialect's shape too.
 */
export interface WireDialect {
  /** Names the shape of its errors (tests tell the envelopes apart by it). */
  name: string;
  /** A header that carries the credential when `Authorization` is absent (`x-api-key`). */
  credentialHeader?: string;
  /** Headers that repeat the request id besides `x-request-id` (`request-id`). */
  requestIdHeaders?: readonly string[];
  /** The body of an error answer, in place of the one envelope. */
  errorBody(error: ApiError, requestId: string): unknown;
  /** The shape of `errorBody`'s answers, for the API's documents. */
  errorSchema?: z.ZodType;
}

/** From here on the request is answered in `dialect`: its request id headers now, its errors later. */
export function speak(
  req: { requestId: string; dialect?: WireDialect },
  res: ServerResponse,
  dialect: WireDialect,
): void {
  req.dialect = dialect;
  for (const header of dialect.requestIdHeaders ?? []) res.setHeader(header, req.requestId);
}

/**
 * `Authorization: Bearer …` as everywhere; where the dialect names a credential header and no
 * Authorization was sent, that header's value (a client configured with an API key sends only it).
 */
export function identify<Req extends IncomingMessage & { dialect?: WireDialect }>(
  authenticator: Authenticator,
  req: Req,
  sessionCredential?: (req: Req) => string | undefined,
): Identity {
  const authorization = req.headers.authorization;
  const header = req.dialect?.credentialHeader;
  const value = header === undefined ? undefined : req.headers[header.toLowerCase()];
  const key = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!authorization && key) return authenticator.identifyCredential(key);
  const session = authorization ? undefined : sessionCredential?.(req);
  if (session) return authenticator.identifyCredential(session);
  return authenticator.identify(authorization);
}
