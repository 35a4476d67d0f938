import * as client from 'openid-client';
import { checkProviderUrl, exchangeError } from './errors.ts';
import type { EnvGet, OAuthProfile, OAuthProvider } from './types.ts';
import { ProviderError } from './types.ts';

const DEFAULT_OAUTH_URL = 'https://github.com';
const DEFAULT_API_URL = 'https://api.github.com';
const TIMEOUT_S = 10;
const SCOPE = 'read:user user:email';

interface GithubSettings {
  clientId: string;
  clientSecret: string;
  oauthUrl: string;
  apiUrl: string;
}

function settingsOf(env: EnvGet): GithubSettings | { missing: string[] } {
  const clientId = env('GITHUB_CLIENT_ID');
  const clientSecret = env('GITHUB_CLIENT_SECRET');
  if (clientId === undefined || clientSecret === undefined) {
    return {
      missing: [
        ...(clientId === undefined ? ['GITHUB_CLIENT_ID'] : []),
        ...(clientSecret === undefined ? ['GITHUB_CLIENT_SECRET'] : []),
      ],
    };
  }
  const trim = (url: string) => url.replace(/\/+$/, '');
  return {
    clientId,
    clientSecret,
    oauthUrl: trim(env('GITHUB_OAUTH_URL') ?? DEFAULT_OAUTH_URL),
    apiUrl: trim(env('GITHUB_API_URL') ?? DEFAULT_API_URL),
  };
}

/** GitHub answers a refused exchange with 200 and `{error}`: make it the 400 that OAuth 2 says it is. */
const githubFetch: client.CustomFetch = async (url, options) => {
  const res = await fetch(url, options as RequestInit);
  if (res.status !== 200 || !(res.headers.get('content-type') ?? '').includes('json')) return res;
  const body = (await res.clone().json()) as { error?: unknown };
  if (typeof body?.error !== 'string') return res;
  return new Response(JSON.stringify(body), { status: 400, headers: { 'content-type': 'application/json' } });
};

function configuration(settings: GithubSettings): client.Configuration {
  const base = settings.oauthUrl;
  const { insecure } = checkProviderUrl(new URL(base), 'GitHub');
  const config = new client.Configuration(
    {
      issuer: base,
      authorization_endpoint: `${base}/login/oauth/authorize`,
      token_endpoint: `${base}/login/oauth/access_token`,
    },
    settings.clientId,
    settings.clientSecret,
    client.ClientSecretPost(settings.clientSecret),
  );
  config[client.customFetch] = githubFetch;
  config.timeout = TIMEOUT_S;
  if (insecure) client.allowInsecureRequests(config);
  return config;
}

interface GithubUser {
  id: number;
  login: string;
  name: string | null;
  email: string | null;
}

interface GithubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
}

async function callApi(settings: GithubSettings, path: string, accessToken: string): Promise<Response> {
  checkProviderUrl(new URL(settings.apiUrl), 'GitHub');
  return fetch(`${settings.apiUrl}${path}`, {
    headers: {
      authorization: `Bearer ${accessToken}`,
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
      'user-agent': 'studio-gateway',
    },
    signal: AbortSignal.timeout(TIMEOUT_S * 1000),
  });
}

async function profileOf(settings: GithubSettings, accessToken: string): Promise<OAuthProfile> {
  const userRes = await callApi(settings, '/user', accessToken);
  if (!userRes.ok) throw new ProviderError('exchange_failed', `GitHub's /user answered ${userRes.status}`);
  const user = (await userRes.json()) as GithubUser;
  if (typeof user?.id !== 'number') throw new ProviderError('exchange_failed', "GitHub's /user has no id");
  // Without the user:email scope this answers 403/404: the person then has no verified email here.
  const emailsRes = await callApi(settings, '/user/emails', accessToken);
  const emails = emailsRes.ok ? ((await emailsRes.json()) as GithubEmail[]) : [];
  const verified = Array.isArray(emails)
    ? (emails.find((e) => e.primary && e.verified) ?? emails.find((e) => e.verified))
    : undefined;
  const email = verified?.email ?? (typeof user.email === 'string' && user.email !== '' ? user.email : null);
  return {
    subject: String(user.id),
    email,
    emailVerified: verified !== undefined,
    name: user.name || user.login || null,
  };
}

/**
 * GitHub: plain OAuth 2 (no OpenID Connect), so no ID token and no nonce; the person is read from
 * its REST API (`/user`, `/user/emails`). `GITHUB_OAUTH_URL` and `GITHUB_API_URL` point it at
 * GitHub Enterprise Server (or at a stand-in in tests).
 */
export function githubProvider(): OAuthProvider {
  return {
    id: 'github',
    name: 'GitHub',
    env: [
      {
        key: 'GITHUB_CLIENT_ID',
        description: 'GitHub sign-in: the OAuth app client id',
        required: false,
      },
      {
        key: 'GITHUB_CLIENT_SECRET',
        description: 'GitHub sign-in: the OAuth app client secret',
        required: false,
      },
      {
        key: 'GITHUB_OAUTH_URL',
        description: `GitHub sign-in: where /login/oauth lives (default ${DEFAULT_OAUTH_URL})`,
        required: false,
      },
      {
        key: 'GITHUB_API_URL',
        description: `GitHub sign-in: the REST API (default ${DEFAULT_API_URL})`,
        required: false,
      },
    ],
    missing(env) {
      const settings = settingsOf(env);
      return 'missing' in settings ? settings.missing : [];
    },
    async authorizationUrl(env, { redirectUri, state, codeChallenge }) {
      const settings = settingsOf(env);
      if ('missing' in settings) throw new ProviderError('exchange_failed', 'GitHub is not configured');
      return client.buildAuthorizationUrl(configuration(settings), {
        redirect_uri: redirectUri,
        scope: SCOPE,
        state,
        code_challenge: codeChallenge,
        code_challenge_method: 'S256',
      });
    },
    async exchange(env, { callbackUrl, state, codeVerifier }) {
      try {
        const settings = settingsOf(env);
        if ('missing' in settings) throw new ProviderError('exchange_failed', 'GitHub is not configured');
        const tokens = await client.authorizationCodeGrant(configuration(settings), callbackUrl, {
          pkceCodeVerifier: codeVerifier,
          expectedState: state,
        });
        return await profileOf(settings, tokens.access_token);
      } catch (error) {
        throw exchangeError(error, 'GitHub');
      }
    },
  };
}
