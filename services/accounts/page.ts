import type { Response } from 'express';

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

function page(title: string, message: string, ok: boolean): string {
  const color = ok ? '#1a7f37' : '#cf222e';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)} · Studio</title>
<style>
body { font: 16px/1.5 system-ui, sans-serif; max-width: 32rem; margin: 15vh auto; padding: 0 1rem; color: #1f2328; }
h1 { font-size: 1.4rem; color: ${color}; }
</style>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(message)}</p>
</main>
</body>
</html>
`;
}

/**
 * Answers the browser with a small HTML page. The page loads nothing and sends no Referer, so the
 * callback URL it was reached by (code and state) goes nowhere else.
 */
export function sendPage(
  res: Response,
  status: number,
  { title, message, ok }: { title: string; message: string; ok: boolean },
): void {
  res
    .status(status)
    .set({
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'Referrer-Policy': 'no-referrer',
      'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
      'X-Frame-Options': 'DENY',
      'X-Content-Type-Options': 'nosniff',
    })
    .send(page(title, message, ok));
}

/** Sends the browser on to `location` (an allow-listed `redirect_to`), with no Referer either. */
export function sendRedirect(res: Response, location: string): void {
  res
    .status(302)
    .set({ Location: location, 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' })
    .end();
}

export const SIGNED_IN = {
  title: 'Signed in',
  message: 'You are signed in to Studio. You can close this window and go back to where you started.',
  ok: true,
} as const;
