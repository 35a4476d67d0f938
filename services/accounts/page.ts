import type { ServerResponse } from 'node:http';
import { sendBody } from '../../shared/http/request.ts';

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

function page(title: string, message: string, ok: boolean, code?: string): string {
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
.code { font: 600 2rem/1.2 ui-monospace, monospace; letter-spacing: 0.15em; user-select: all; }
</style>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(message)}</p>
${code === undefined ? '' : `<p class="code">${escapeHtml(code)}</p>\n<p>Never give this code to anyone else: whoever has it gets your sign-in.</p>\n`}</main>
</body>
</html>
`;
}

const PAGE_HEADERS = {
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
};

/**
 * Answers the browser with a small HTML page. The page loads nothing and sends no Referer, so the
 * callback URL it was reached by (code and state) goes nowhere else.
 */
export function sendPage(
  res: ServerResponse,
  status: number,
  { title, message, ok, code }: { title: string; message: string; ok: boolean; code?: string },
): void {
  for (const [name, value] of Object.entries(PAGE_HEADERS)) res.setHeader(name, value);
  sendBody(res, status, 'text/html; charset=utf-8', page(title, message, ok, code));
}

/** Sends the browser on to `location` (an allow-listed `redirect_to`), with no Referer either. */
export function sendRedirect(res: ServerResponse, location: string): void {
  res.writeHead(302, { Location: location, 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' });
  res.end();
}

/** The page of a completed sign-in: the one-time code to enter where the sign-in was started. */
export function signedInPage(code: string) {
  return {
    title: 'Signed in',
    message:
      'You are signed in to Studio. To finish, enter this code in the app where you started signing in, then close this window.',
    ok: true,
    code,
  };
}
