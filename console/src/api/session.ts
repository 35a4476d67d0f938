import { requestJson } from './http.ts';

/** Who is signed in to the console: the admin, or a studio's user token. */
export type ConsoleIdentity =
  | { kind: 'admin' }
  | { kind: 'user'; studio_id: string; token_id: string; models: string[] | null };

export const consoleSession = {
  current: () =>
    requestJson<({ signed_in: true } & ConsoleIdentity) | { signed_in: false }>('GET', '/console/session'),
  /** Exchanges an admin key or user token for the HttpOnly session cookie; the page keeps nothing. */
  signIn: (credential: string) =>
    requestJson<{ signed_in: true } & ConsoleIdentity>('POST', '/console/session', { credential }),
  signOut: () => requestJson<{ signed_out: true }>('POST', '/console/session/sign-out'),
};
