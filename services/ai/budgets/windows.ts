import type { BudgetWindow } from './budgets.ts';

/** The window an instant falls in: `total`, `day:YYYY-MM-DD` or `month:YYYY-MM` (UTC calendar). */
export function windowKey(window: BudgetWindow, iso: string): string {
  switch (window) {
    case 'total':
      return 'total';
    case 'day':
      return `day:${iso.slice(0, 10)}`;
    case 'month':
      return `month:${iso.slice(0, 7)}`;
  }
}

/** What the instants of a window begin with: its date (`2026-11-24`, `2026-11`), or nothing for `total`. */
export const windowPrefix = (key: string) => (key === 'total' ? '' : key.slice(key.indexOf(':') + 1));

/** When the window holding `iso` ends (ISO), or null for `total`. */
export function resetsAt(window: BudgetWindow, iso: string): string | null {
  const at = new Date(iso);
  switch (window) {
    case 'total':
      return null;
    case 'day':
      return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1)).toISOString();
    case 'month':
      return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1)).toISOString();
  }
}

/** Every window key an instant is charged to. */
export const windowKeysAt = (iso: string) => [
  windowKey('total', iso),
  windowKey('day', iso),
  windowKey('month', iso),
];
