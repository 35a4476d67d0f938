import type { RequestHandler } from 'express';
import { secretEquals } from '../../../shared/crypto.ts';
import { ApiError } from '../../../shared/errors.ts';

/**
 * With a STUDIO_RUNTIME_TOKEN, every `/api/*` request needs `Authorization: Bearer <token>`, unknown
 * routes included (401 before 404); without one, the origin guard is what keeps strangers out.
 */
export function runtimeAuth(runtimeToken: string | undefined): RequestHandler {
  return (req, _res, next) => {
    if (runtimeToken === undefined) return next();
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.header('authorization') ?? '');
    if (match && secretEquals(match[1]!, runtimeToken)) return next();
    next(new ApiError('unauthenticated', 'this runtime needs Authorization: Bearer <STUDIO_RUNTIME_TOKEN>'));
  };
}
