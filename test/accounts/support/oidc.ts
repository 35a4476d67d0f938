import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The people the test provider knows: log in with their key as the login name (any password). */
export const PEOPLE = {
  alice: { email: 'alice@example.com', email_verified: true, name: 'Alice Liddell' },
  bob: { email: 'bob@example.com', email_verified: true, name: 'Bob' },
  /** Claims alice's address, but the provider does not vouch for it. */
  mallory: { email: 'alice@example.com', email_verified: false, name: 'Mallory' },
  carol: { email: 'carol@partner.example', email_verified: true, name: 'Carol' },
} as const;

export type Person = keyof typeof PEOPLE;

export interface TestOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  close(): Promise<void>;
}

/**
 * A real OpenID provider (`oidc-provider`) on loopback with one confidential client that must use
 * PKCE, and its development login and consent pages (login = a key of PEOPLE, any password).
 */
export async function startOidcProvider(options: { redirectUris: string[] }): Promise<TestOidcProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'studio-gateway';
  const clientSecret = `secret-${Math.random().toString(36).slice(2)}-${Date.now()}`;

  // It warns (on stderr) about its development defaults and Node 20; that is what this is for.
  const warn = console.warn;
  console.warn = () => {};
  let provider: import('oidc-provider').default;
  try {
    const { default: Provider } = await import('oidc-provider');
    provider = new Provider(issuer, {
      clients: [
        {
          client_id: clientId,
          client_secret: clientSecret,
          redirect_uris: options.redirectUris,
          response_types: ['code'],
          grant_types: ['authorization_code'],
          token_endpoint_auth_method: 'client_secret_basic',
        },
      ],
      pkce: { required: () => true },
      cookies: { keys: ['test-cookie-signing-key-0123456789'] },
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
      features: { devInteractions: { enabled: true } },
      ttl: {
        AuthorizationCode: 60,
        AccessToken: 600,
        IdToken: 600,
        Interaction: 600,
        Session: 3600,
        Grant: 3600,
      },
      async findAccount(_ctx: unknown, sub: string) {
        const person = (PEOPLE as Record<string, (typeof PEOPLE)[Person]>)[sub];
        if (!person) return undefined;
        return { accountId: sub, claims: async () => ({ sub, ...person }) };
      },
    });
  } finally {
    console.warn = warn;
  }
  server.on('request', provider.callback());
  return {
    issuer,
    clientId,
    clientSecret,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
