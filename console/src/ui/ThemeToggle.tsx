import { useState } from 'preact/hooks';
import { applyTheme, initialTheme, type Theme } from './theme.ts';

export function ThemeToggle() {
  const [theme, setTheme] = useState<Theme>(() => {
    const start = initialTheme();
    applyTheme(start);
    return start;
  });
  const next: Theme = theme === 'dark' ? 'light' : 'dark';
  return (
    <button
      type="button"
      aria-pressed={theme === 'dark'}
      onClick={() => {
        applyTheme(next);
        setTheme(next);
      }}
    >
      Dark mode
    </button>
  );
}
