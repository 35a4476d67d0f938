import { secretEquals } from '../../../shared/crypto.ts';
import { ApiError } from '../../../shared/errors.ts';
import type { Guard } from '../../../shared/http/front-door.ts';
import { headerOf } from '../../../shared/http/request.ts';

/**
 * With a STUDIO_RUNTIME_TOKEN, every `/api/*` request but the open ones (the API's document) needs
 * `Authorization: Bearer <token>`, unknown routes included (401 before 404); without one, the origin
 * guard is what keeps strangers out.
 */
export function runtimeAuth(runtimeToken: string | undefined, open: ReadonlySet<string>): Guard {
  return (req, _res, path) => {
    if (runtimeToken === undefined) return 'pass';
    const lower = path.toLowerCase();
    if (!(lower === '/api' || lower.startsWith('/api/')) || open.has(lower.replace(/\/$/, ''))) return 'pass';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(headerOf(req, 'authorization') ?? '');
    if (match && secretEquals(match[1]!, runtimeToken)) return 'pass';
    throw new ApiError('unauthenticated', 'this runtime needs Authorization: Bearer <STUDIO_RUNTIME_TOKEN>');
  };
}
