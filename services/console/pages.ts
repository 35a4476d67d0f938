import { existsSync } from 'node:fs';
import express, { type Express, type Response } from 'express';
import { ApiError } from '../../shared/errors.ts';
import { sendError } from '../../shared/http/errors.ts';
import { fromRoot } from '../../shared/paths.ts';

/** Where `npm run build:console` (run by `npm install`) puts the built pages and their assets. */
export const CONSOLE_DIST = `${fromRoot('dist', 'console')}/`;

/** Only our own scripts, styles and API: nothing from elsewhere runs or loads, and no one frames us. */
const PAGE_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-cache',
};

function sendPage(res: Response, file: string, dist: string): void {
  const path = `${dist}${file}`;
  if (!existsSync(path)) {
    sendError(
      res,
      new ApiError(
        'unavailable',
        'the console is not built: run `npm run build:console` (npm install does it)',
      ),
    );
    return;
  }
  res.set(PAGE_HEADERS).sendFile(path);
}

/** Hashed file names never change content: cached for a year. */
function assets(dist: string) {
  return express.static(`${dist}assets`, { immutable: true, maxAge: '365d', index: false });
}

/**
 * The gateway console: the page at `/console/` (routes after `#`), its assets under `/console/assets/`,
 * and `/` redirecting to it.
 */
export function mountGatewayConsole(app: Express, dist = CONSOLE_DIST): void {
  // The gateway's root is where a person lands first: send them to the console (302: not cached for good).
  app.get('/', (_req, res) => res.redirect(302, '/console/'));
  // Express matches `/console` and `/console/` alike: the page needs the slash for its relative assets.
  app.get('/console', (req, res) =>
    req.path.endsWith('/') ? sendPage(res, 'index.html', dist) : res.redirect(301, '/console/'),
  );
  app.use('/console/assets', assets(dist));
}

/** The runtime console: the page at the runtime's `/`, its assets under `/assets/`. */
export function mountRuntimeConsole(app: Express, dist = CONSOLE_DIST): void {
  app.get('/', (_req, res) => sendPage(res, 'runtime.html', dist));
  app.use('/assets', assets(dist));
}
