import { Link, Redirect, Route, Router, Switch, useLocation } from 'wouter-preact';
import { useHashLocation } from 'wouter-preact/use-hash-location';
import { ThemeToggle } from '../ui/ThemeToggle.tsx';
import { PAGES } from './pages/index.ts';
import { TokenGate } from './TokenGate.tsx';

/** The runtime console, served at the runtime's `/`: each page is a route after `#`. */
export function App() {
  return (
    <TokenGate>
      <Router hook={useHashLocation}>
        <Shell />
      </Router>
    </TokenGate>
  );
}

function Shell() {
  const [location] = useLocation();
  return (
    <div class="shell">
      <nav aria-label="Runtime">
        <span class="brand">Studio runtime</span>
        <ul>
          {PAGES.map((page) => (
            <li key={page.path}>
              <Link href={page.path} aria-current={location.startsWith(page.path) ? 'page' : undefined}>
                {page.title}
              </Link>
            </li>
          ))}
        </ul>
        <div class="row">
          <ThemeToggle />
        </div>
      </nav>
      <main id="content" tabIndex={-1}>
        <Switch>
          {PAGES.map((page) => (
            <Route key={page.path} path={page.path} nest>
              <page.component />
            </Route>
          ))}
          <Route>
            <Redirect to={PAGES[0]?.path ?? '/'} />
          </Route>
        </Switch>
      </main>
    </div>
  );
}
