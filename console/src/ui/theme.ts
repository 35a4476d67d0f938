/** Light or dark: the system's preference until the user picks one (kept for this tab only). */
export type Theme = 'light' | 'dark';

const prefersDark = () => window.matchMedia?.('(prefers-color-scheme: dark)').matches ?? false;

export function initialTheme(): Theme {
  const chosen = sessionStorage.getItem('studio-theme');
  if (chosen === 'light' || chosen === 'dark') return chosen;
  return prefersDark() ? 'dark' : 'light';
}

export function applyTheme(theme: Theme): void {
  document.documentElement.dataset.theme = theme;
  sessionStorage.setItem('studio-theme', theme);
}
