import type { FunctionComponent } from 'preact';
import type { ConsoleIdentity } from '../../api/session.ts';
import { AccountsPage } from './Accounts.tsx';
import { AlertsPage } from './Alerts.tsx';
import { AuditPage } from './Audit.tsx';
import { BudgetsPage } from './Budgets.tsx';
import { EnvPage } from './Env.tsx';
import { LimitsPage } from './Limits.tsx';
import { ModelsPage } from './Models.tsx';
import { OverviewPage } from './Overview.tsx';
import { PricesPage } from './Prices.tsx';
import { ProvidersPage } from './Providers.tsx';
import { RequestsPage } from './Requests.tsx';
import { RoutesPage } from './Routes.tsx';
import { StudiosPage } from './Studios.tsx';
import { TokensPage } from './Tokens.tsx';
import { UsagePage } from './Usage.tsx';

export interface PageProps {
  identity: ConsoleIdentity;
}

export interface ConsolePage {
  /** After the `#`: `/studios`. */
  path: string;
  title: string;
  /** Who sees it in the menu (the gateway decides what each identity may do either way). */
  for: readonly ConsoleIdentity['kind'][];
  component: FunctionComponent<PageProps>;
}

/** Every page of the gateway console, in menu order. */
export const PAGES: readonly ConsolePage[] = [
  { path: '/overview', title: 'Overview', for: ['admin', 'user'], component: OverviewPage },
  { path: '/requests', title: 'Requests', for: ['admin', 'user'], component: RequestsPage },
  { path: '/studios', title: 'Studios', for: ['admin'], component: StudiosPage },
  { path: '/tokens', title: 'Tokens', for: ['admin', 'user'], component: TokensPage },
  { path: '/env', title: 'Env', for: ['admin'], component: EnvPage },
  { path: '/providers', title: 'Providers', for: ['admin'], component: ProvidersPage },
  { path: '/models', title: 'Models', for: ['admin', 'user'], component: ModelsPage },
  { path: '/prices', title: 'Prices', for: ['admin', 'user'], component: PricesPage },
  { path: '/accounts', title: 'Accounts', for: ['admin'], component: AccountsPage },
  { path: '/budgets', title: 'Budgets', for: ['admin'], component: BudgetsPage },
  { path: '/limits', title: 'Rate limits', for: ['admin'], component: LimitsPage },
  { path: '/routes', title: 'Routes', for: ['admin'], component: RoutesPage },
  { path: '/usage', title: 'Usage', for: ['admin', 'user'], component: UsagePage },
  { path: '/audit', title: 'Audit log', for: ['admin'], component: AuditPage },
  { path: '/alerts', title: 'Alerts', for: ['admin', 'user'], component: AlertsPage },
];
