import type { TLSSocket } from 'node:tls';
import { parseCookie, stringifySetCookie } from 'cookie';
import { z } from 'zod';
import type { SecretBox } from '../../shared/crypto.ts';
import { ApiError } from '../../shared/errors.ts';
import { type AnyRoute, defineRoute, noInput } from '../../shared/http/action.ts';
import type { Authenticator, Identity } from '../../shared/http/identity.ts';
import type { StudioRequest, StudioResponse } from '../../shared/http/request.ts';

/**
 * The console's sign-in: the credential (admin key or user token) is kept in an HttpOnly cookie,
 * sealed with the master key, so page scripts never hold it after sign-in and no response carries it.
 * Requests authenticated by the cookie must carry `x-studio-console: 1`: a page of another site
 * cannot set that header without a CORS preflight we never grant, so it cannot ride the cookie (CSRF).
 */
export const CONSOLE_COOKIE = 'studio_console';
export const CONSOLE_HEADER = 'x-studio-console';
/** A console sign-in lasts a working day; the credential itself may expire or be revoked sooner. */
const SESSION_S = 12 * 3600;

const sealedSession = z.object({ credential: z.string().min(1), expires_at: z.number() });

export interface ConsoleSessionDeps {
  authenticator: Authenticator;
  secrets: SecretBox;
}

/** The credential of a console request, or undefined (no cookie, no header, expired, tampered). */
export function consoleCredential(
  secrets: SecretBox,
  req: StudioRequest,
  now = Date.now(),
): string | undefined {
  if (req.headers[CONSOLE_HEADER] !== '1') return undefined;
  const sealed = parseCookie(req.headers.cookie ?? '')[CONSOLE_COOKIE];
  if (!sealed) return undefined;
  try {
    const session = sealedSession.parse(JSON.parse(secrets.decrypt(sealed)));
    return session.expires_at > now ? session.credential : undefined;
  } catch {
    return undefined;
  }
}

/** Who a console session is, as the console shows it. */
export function describeIdentity(identity: Identity) {
  switch (identity.kind) {
    case 'admin':
      return { kind: 'admin' as const };
    case 'user':
      return {
        kind: 'user' as const,
        studio_id: identity.studioId,
        token_id: identity.tokenId,
        models: identity.models,
      };
    case 'guest':
      throw new ApiError('unauthenticated', 'not signed in');
    default: {
      const never: never = identity;
      return never;
    }
  }
}

function setCookie(req: StudioRequest, res: StudioResponse, value: string, maxAgeS: number): void {
  res.appendHeader(
    'Set-Cookie',
    stringifySetCookie(CONSOLE_COOKIE, value, {
      httpOnly: true,
      sameSite: 'strict',
      secure: (req.socket as TLSSocket).encrypted === true,
      path: '/',
      maxAge: maxAgeS,
    }),
  );
}

/** `/console/session`: sign in (POST), who is signed in (GET), sign out (POST `…/sign-out`). */
export function consoleSessionRoutes({ authenticator, secrets }: ConsoleSessionDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/console/session',
      identities: [],
      input: z.strictObject({ credential: z.string().trim().min(1).max(4096) }),
      handler: ({ credential }, { req, res }) => {
        if (req.headers[CONSOLE_HEADER] !== '1')
          throw new ApiError('forbidden', `signing in to the console needs the ${CONSOLE_HEADER}: 1 header`);
        const who = describeIdentity(authenticator.identifyCredential(credential));
        const sealed = secrets.encrypt(
          JSON.stringify({ credential, expires_at: Date.now() + SESSION_S * 1000 }),
        );
        setCookie(req, res, sealed, SESSION_S);
        return { signed_in: true, ...who };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/console/session',
      identities: [],
      input: noInput,
      handler: (_input, { req }) => {
        // Not signed in is an answer, not an error: the page asks this on every load.
        const credential = consoleCredential(secrets, req);
        if (!credential) return { signed_in: false };
        return { signed_in: true, ...describeIdentity(authenticator.identifyCredential(credential)) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/console/session/sign-out',
      identities: [],
      input: noInput,
      handler: (_input, { req, res }) => {
        setCookie(req, res, '', 0);
        return { signed_out: true };
      },
    }),
  ];
}
