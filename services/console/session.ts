import { randomUUID } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import { parseCookie, stringifySetCookie } from 'cookie';
import { z } from 'zod';
import { consoleSessionsProjection } from '../../projections/console-sessions.ts';
import { commandHandler } from '../../shared/command-handler.ts';
import type { SecretBox } from '../../shared/crypto.ts';
import { ApiError } from '../../shared/errors.ts';
import type { EventMetadata } from '../../shared/event-store/types.ts';
import type { GatewayContext } from '../../shared/gateway-context.ts';
import { type AnyPathEndpoint, defineEndpoint, noInput } from '../../shared/http/action.ts';
import type { Authenticator, Identity } from '../../shared/http/identity.ts';
import type { ServedRequest, ServedResponse } from '../../shared/http/request.ts';
import { type ConsoleSessionCommand, consoleSessionDecider, consoleSessionStreamId } from './sign-out.ts';

/**
 * The console's sign-in: the credential (admin key or user token) is kept in an HttpOnly cookie,
 * encrypted with the master key, so page scripts never hold it after sign-in and no response carries it.
 * Requests authenticated by the cookie must carry `x-studio-console: 1`: a page of another site
 * cannot set that header without a CORS preflight we never grant, so it cannot ride the cookie (CSRF).
 * Each sign-in is a session with an id of its own; signing out ends it on the server
 * (`ConsoleSessionEnded`, in the log), so a copy of the cookie is refused from then on, by every
 * gateway. Served over https (or behind a proxy ending TLS, `STUDIO_PUBLIC_URL` https) the cookie
 * is `Secure` and named `__Host-studio_console`: only this origin can set or read it.
 */
export const CONSOLE_COOKIE = 'studio_console';
const SECURE_COOKIE = `__Host-${CONSOLE_COOKIE}`;
export const CONSOLE_HEADER = 'x-studio-console';
/** A console sign-in lasts a working day; the credential itself may expire or be revoked sooner. */
const SESSION_S = 12 * 3600;

const encryptedSession = z.object({
  /** Sessions made before they had ids have none: they end when their cookie expires. */
  id: z.string().optional(),
  credential: z.string().min(1),
  expires_at: z.number(),
});
type ConsoleSession = z.infer<typeof encryptedSession>;

/** Where console sessions are kept and ended. */
export interface ConsoleSessions {
  secrets: SecretBox;
  /** Cookies only over https (`STUDIO_PUBLIC_URL` https, or a TLS socket): `Secure`, `__Host-`. */
  secure: boolean;
  /** Whether session `id` was signed out. */
  ended(id: string): boolean;
  /** Ends session `id` (whose cookie expires at `expiresAt`); resolves once every read sees it. */
  end(id: string, expiresAt: string, metadata: EventMetadata): Promise<void>;
}

export interface ConsoleSessionDeps {
  authenticator: Authenticator;
  sessions: ConsoleSessions;
}

const cookieName = (sessions: ConsoleSessions, req: ServedRequest) =>
  sessions.secure || (req.socket as TLSSocket).encrypted === true ? SECURE_COOKIE : CONSOLE_COOKIE;

/** The console session of a request, or undefined (no cookie, no header, expired, tampered, ended). */
function sessionOf(
  sessions: ConsoleSessions,
  req: ServedRequest,
  now = Date.now(),
): ConsoleSession | undefined {
  if (req.headers[CONSOLE_HEADER] !== '1') return undefined;
  const encrypted = parseCookie(req.headers.cookie ?? '')[cookieName(sessions, req)];
  if (!encrypted) return undefined;
  try {
    const session = encryptedSession.parse(JSON.parse(sessions.secrets.decrypt(encrypted)));
    if (session.expires_at <= now || (session.id !== undefined && sessions.ended(session.id)))
      return undefined;
    return session;
  } catch {
    return undefined;
  }
}

/** The credential of a console request, or undefined (no cookie, no header, expired, tampered, signed out). */
export const consoleCredential = (sessions: ConsoleSessions, req: ServedRequest): string | undefined =>
  sessionOf(sessions, req)?.credential;

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

function setCookie(
  sessions: ConsoleSessions,
  req: ServedRequest,
  res: ServedResponse,
  value: string,
  maxAgeS: number,
): void {
  const name = cookieName(sessions, req);
  res.appendHeader(
    'Set-Cookie',
    stringifySetCookie(name, value, {
      httpOnly: true,
      sameSite: 'strict',
      secure: name === SECURE_COOKIE,
      path: '/',
      maxAge: maxAgeS,
    }),
  );
}

/** `/console/session`: sign in (POST), who is signed in (GET), sign out (POST `…/sign-out`). */
export function consoleSessionRoutes({ authenticator, sessions }: ConsoleSessionDeps): AnyPathEndpoint[] {
  return [
    defineEndpoint({
      method: 'POST',
      path: '/console/session',
      identities: [],
      input: z.strictObject({ credential: z.string().trim().min(1).max(4096) }),
      handler: ({ credential }, { req, res }) => {
        if (req.headers[CONSOLE_HEADER] !== '1')
          throw new ApiError('forbidden', `signing in to the console needs the ${CONSOLE_HEADER}: 1 header`);
        const who = describeIdentity(authenticator.identifyCredential(credential));
        const session: ConsoleSession = {
          id: randomUUID(),
          credential,
          expires_at: Date.now() + SESSION_S * 1000,
        };
        setCookie(sessions, req, res, sessions.secrets.encrypt(JSON.stringify(session)), SESSION_S);
        return { signed_in: true, ...who };
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/console/session',
      identities: [],
      input: noInput,
      handler: (_input, { req }) => {
        // Not signed in is an answer, not an error: the page asks this on every load.
        const credential = consoleCredential(sessions, req);
        if (!credential) return { signed_in: false };
        return { signed_in: true, ...describeIdentity(authenticator.identifyCredential(credential)) };
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: '/console/session/sign-out',
      identities: [],
      input: noInput,
      handler: async (_input, { req, res, metadata }) => {
        // Ended on the server, so that a copy of the cookie is refused too, not only forgotten here.
        const session = sessionOf(sessions, req);
        if (session?.id !== undefined)
          await sessions.end(session.id, new Date(session.expires_at).toISOString(), metadata);
        setCookie(sessions, req, res, '', 0);
        return { signed_out: true };
      },
    }),
  ];
}

/** Console sessions kept by a gateway: ended by events in the log, read from the read model. */
export function gatewayConsoleSessions(gw: GatewayContext, publicUrl: string | undefined): ConsoleSessions {
  const ends = commandHandler(consoleSessionDecider, {
    events: gw.events,
    streamOf: (command: ConsoleSessionCommand) => consoleSessionStreamId(command.sessionId),
    readModels: gw.projections,
  });
  return {
    secrets: gw.secrets,
    secure: publicUrl?.startsWith('https:') === true,
    ended: (id) => gw.projections.state(consoleSessionsProjection).has(id),
    async end(id, expiresAt, metadata) {
      await ends({ type: 'EndConsoleSession', sessionId: id, expiresAt }, metadata);
    },
  };
}
