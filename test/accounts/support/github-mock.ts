import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GithubPerson {
  id: number;
  login: string;
  name: string | null;
  email: string | null;
  emails: { email: string; primary: boolean; verified: boolean }[];
}

export interface GithubMock {
  url: string;
  clientId: string;
  clientSecret: string;
  /** Who the next authorization signs in as. */
  person: GithubPerson;
  /** Requests received, by path. */
  calls: string[];
  /** Env that points the gateway's GitHub provider here. */
  env(): Record<string, string>;
  close(): Promise<void>;
}

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/**
 * GitHub as its OAuth app flow and REST API behave: `/login/oauth/authorize` (signs in at once),
 * `/login/oauth/access_token` (JSON when asked; a refused exchange is a 200 with `{error}`, as on
 * GitHub; checks the client, the single-use code, the redirect URI and PKCE S256), `/user`, `/user/emails`.
 */
export async function startGithubMock(person: GithubPerson): Promise<GithubMock> {
  const clientId = 'Iv1.test-client';
  const clientSecret = randomBytes(20).toString('hex');
  const codes = new Map<string, { redirectUri: string; challenge: string | null; person: GithubPerson }>();
  const tokens = new Map<string, GithubPerson>();
  const calls: string[] = [];

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
  };
  const readBody = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };

  const mock: GithubMock = {
    url: '',
    clientId,
    clientSecret,
    person,
    calls,
    env: () => ({
      GITHUB_CLIENT_ID: clientId,
      GITHUB_CLIENT_SECRET: clientSecret,
      GITHUB_OAUTH_URL: mock.url,
      GITHUB_API_URL: mock.url,
    }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };

  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', mock.url);
    calls.push(url.pathname);
    if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') {
      const redirectUri = url.searchParams.get('redirect_uri') ?? '';
      if (url.searchParams.get('client_id') !== clientId) return json(res, 404, { error: 'unknown client' });
      const code = randomBytes(10).toString('hex');
      const method = url.searchParams.get('code_challenge_method');
      codes.set(code, {
        redirectUri,
        challenge: method === 'S256' ? url.searchParams.get('code_challenge') : null,
        person: mock.person,
      });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      res.writeHead(302, { location: back.href }).end();
      return;
    }
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      const form = new URLSearchParams(await readBody(req));
      if (form.get('client_id') !== clientId || form.get('client_secret') !== clientSecret)
        return json(res, 200, { error: 'incorrect_client_credentials', error_description: 'wrong client' });
      const grant = codes.get(form.get('code') ?? '');
      codes.delete(form.get('code') ?? '');
      const verifier = form.get('code_verifier');
      if (
        !grant ||
        grant.redirectUri !== form.get('redirect_uri') ||
        (grant.challenge !== null && (verifier === null || s256(verifier) !== grant.challenge))
      ) {
        return json(res, 200, {
          error: 'bad_verification_code',
          error_description: 'The code passed is incorrect or expired.',
        });
      }
      const token = `gho_${randomBytes(18).toString('hex')}`;
      tokens.set(token, grant.person);
      return json(res, 200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
    }
    const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const who = bearer === undefined ? undefined : tokens.get(bearer);
    if (req.method === 'GET' && (url.pathname === '/user' || url.pathname === '/user/emails')) {
      if (!who) return json(res, 401, { message: 'Bad credentials' });
      if (url.pathname === '/user') {
        const { emails: _emails, ...user } = who;
        return json(res, 200, user);
      }
      return json(res, 200, who.emails);
    }
    json(res, 404, { message: 'Not Found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  mock.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return mock;
}
