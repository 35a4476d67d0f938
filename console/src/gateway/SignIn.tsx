import { useState } from 'preact/hooks';
import { gateway } from '../api/gateway.ts';
import { requestJson, unwrap } from '../api/http.ts';
import { type ConsoleIdentity, consoleSession } from '../api/session.ts';
import { ErrorNotice } from '../ui/ErrorNotice.tsx';
import { ThemeToggle } from '../ui/ThemeToggle.tsx';
import { useAction, useResource } from '../ui/use-resource.ts';

type Method = 'key' | 'password' | 'oauth';

interface OAuthProviderItem {
  id: 'github' | 'google' | 'oidc';
  name: string;
}

/** The OAuth providers the gateway is configured for; none when it cannot say (OAuth is then not offered). */
async function configuredProviders(): Promise<OAuthProviderItem[]> {
  try {
    return (await requestJson<{ items: OAuthProviderItem[] }>('GET', '/v1/accounts/oauth/providers')).items;
  } catch {
    return [];
  }
}

/**
 * Sign-in: the admin key or a user token, an account's email and password, or an OAuth provider
 * (offered only when the gateway has one configured).
 */
export function SignIn({ onSignedIn }: { onSignedIn(identity: ConsoleIdentity): void }) {
  const [method, setMethod] = useState<Method>('key');
  const providers = useResource(configuredProviders).data ?? [];
  const methods = (
    [
      ['key', 'Key or token'],
      ['password', 'Account'],
      ['oauth', 'OAuth'],
    ] as const
  ).filter(([id]) => id !== 'oauth' || providers.length > 0);
  const { act, busy, error } = useAction(async (form: FormData) => {
    const field = (name: string) => String(form.get(name) ?? '');
    if (method === 'key') return onSignedIn(await consoleSession.signIn(field('credential')));
    if (method === 'password') {
      const login = unwrap(
        await gateway.POST('/v1/accounts/login', {
          body: { email: field('email'), password: field('password'), studio_id: field('studio_id') },
        }),
      ) as { user_token: string };
      return onSignedIn(await consoleSession.signIn(login.user_token));
    }
    const started = unwrap(
      await gateway.POST('/v1/accounts/oauth/start', {
        body: {
          provider: field('provider') as OAuthProviderItem['id'],
          studio_id: field('studio_id'),
          redirect_to: `${window.location.origin}/console/`,
        },
      }),
    ) as { authorization_url: string; state: string };
    // The state alone gets nothing (the result needs the code the callback gives this browser).
    sessionStorage.setItem('studio-oauth-state', started.state);
    window.location.assign(started.authorization_url);
  });

  return (
    <main class="signin">
      <h1>Sign in to Studio</h1>
      <div role="tablist" aria-label="How to sign in" class="row">
        {methods.map(([id, label]) => (
          <button
            key={id}
            type="button"
            role="tab"
            aria-selected={method === id}
            class={method === id ? 'primary' : ''}
            onClick={() => setMethod(id)}
          >
            {label}
          </button>
        ))}
      </div>
      <form
        class="card"
        onSubmit={(event) => {
          event.preventDefault();
          void act(new FormData(event.currentTarget));
        }}
      >
        {method === 'key' && (
          <div class="field">
            <label for="credential">Admin key or user token</label>
            <input id="credential" name="credential" type="password" autoComplete="off" required />
          </div>
        )}
        {method === 'password' && (
          <>
            <div class="field">
              <label for="studio_id">Studio</label>
              <input id="studio_id" name="studio_id" required />
            </div>
            <div class="field">
              <label for="email">Email</label>
              <input id="email" name="email" type="email" autoComplete="username" required />
            </div>
            <div class="field">
              <label for="password">Password</label>
              <input id="password" name="password" type="password" autoComplete="current-password" required />
            </div>
          </>
        )}
        {method === 'oauth' && (
          <>
            <div class="field">
              <label for="studio_id">Studio</label>
              <input id="studio_id" name="studio_id" required />
            </div>
            <div class="field">
              <label for="provider">Provider</label>
              <select id="provider" name="provider">
                {providers.map((provider) => (
                  <option key={provider.id} value={provider.id}>
                    {provider.name}
                  </option>
                ))}
              </select>
            </div>
          </>
        )}
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <ErrorNotice error={error} />
      </form>
      <ThemeToggle />
    </main>
  );
}
