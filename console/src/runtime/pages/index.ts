import type { FunctionComponent } from 'preact';
import { PluginsPage } from './Plugins.tsx';
import { SessionsPage } from './Sessions.tsx';
import { StatusPage } from './Status.tsx';

export interface RuntimePage {
  /** After the `#`: `/status`. */
  path: string;
  title: string;
  component: FunctionComponent;
}

/** Every page of the runtime console, in menu order. */
export const PAGES: readonly RuntimePage[] = [
  { path: '/status', title: 'Status', component: StatusPage },
  { path: '/plugins', title: 'Plugins', component: PluginsPage },
  { path: '/sessions', title: 'Sessions', component: SessionsPage },
];
