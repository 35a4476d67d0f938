import { useEffect, useState } from 'preact/hooks';
import { Link, Redirect, Route, Router, Switch, useLocation } from 'wouter-preact';
import { useHashLocation } from 'wouter-preact/use-hash-location';
import { endSessionRequests } from '../api/http.ts';
import { type ConsoleIdentity, consoleSession } from '../api/session.ts';
import { Busy } from '../ui/Busy.tsx';
import { ErrorNotice } from '../ui/ErrorNotice.tsx';
import { ThemeToggle } from '../ui/ThemeToggle.tsx';
import { finishOAuthReturn } from './oauth-return.ts';
import { PAGES } from './pages/index.ts';
import { SignIn } from './SignIn.tsx';

type SessionState =
  | { state: 'loading' }
  | { state: 'signing-out' }
  | { state: 'signed-out'; error?: unknown }
  | { state: 'in'; identity: ConsoleIdentity };

/** The gateway console: who is signed in decides the menu; each page is a route after `#`. */
export function App() {
  const [session, setSession] = useState<SessionState>({ state: 'loading' });
  useEffect(() => {
    const resume = async () => {
      const token = await finishOAuthReturn();
      const session = token ? await consoleSession.signIn(token) : await consoleSession.current();
      setSession(session.signed_in ? { state: 'in', identity: session } : { state: 'signed-out' });
    };
    resume().catch((error: unknown) => setSession({ state: 'signed-out', error }));
  }, []);

  // The pages and their requests go first, so none is refused for the session that ends; the
  // sign-in form comes once the gateway has ended it.
  const signOut = async () => {
    setSession({ state: 'signing-out' });
    endSessionRequests();
    await consoleSession.signOut().catch(() => undefined);
    setSession({ state: 'signed-out' });
  };

  if (session.state === 'loading') return <Busy label="Loading the console" />;
  if (session.state === 'signing-out') return <Busy label="Signing out" />;
  if (session.state === 'signed-out')
    return (
      <>
        <ErrorNotice error={session.error} />
        <SignIn onSignedIn={(identity) => setSession({ state: 'in', identity })} />
      </>
    );
  return (
    <Router hook={useHashLocation}>
      <Shell identity={session.identity} onSignOut={signOut} />
    </Router>
  );
}

function Shell({ identity, onSignOut }: { identity: ConsoleIdentity; onSignOut(): void }) {
  const [location] = useLocation();
  const pages = PAGES.filter((page) => page.for.includes(identity.kind));
  return (
    <div class="shell">
      {/* The routes live after `#`, so the skip link is a button that moves focus. */}
      <button type="button" class="skip" onClick={() => document.getElementById('content')?.focus()}>
        Skip to content
      </button>
      <nav aria-label="Console">
        <span class="brand">Studio</span>
        <ul>
          {pages.map((page) => (
            <li key={page.path}>
              <Link href={page.path} aria-current={location === page.path ? 'page' : undefined}>
                {page.title}
              </Link>
            </li>
          ))}
        </ul>
        <div class="who">
          {identity.kind === 'admin'
            ? 'Signed in as admin'
            : `Studio ${identity.studio_id} (token ${identity.token_id})`}
        </div>
        <div class="row">
          <button type="button" onClick={onSignOut}>
            Sign out
          </button>
          <ThemeToggle />
        </div>
      </nav>
      <main id="content" tabIndex={-1}>
        <Switch>
          {pages.map((page) => (
            <Route key={page.path} path={page.path}>
              <page.component identity={identity} />
            </Route>
          ))}
          <Route>
            <Redirect to={pages[0]?.path ?? '/'} />
          </Route>
        </Switch>
      </main>
    </div>
  );
}
