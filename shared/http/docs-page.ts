import type { ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type { RequestHandler, Router } from 'express';
import { ApiError } from '../errors.ts';
import { fromRoot } from '../paths.ts';
import { defineEndpoint, noInput } from './action.ts';
import { sendBody } from './request.ts';

/**
 * `GET /docs`: the API reference, Swagger UI over this app's OpenAPI document, served from the
 * installed `swagger-ui-dist` (no CDN) under a CSP that lets the page load only this origin's files.
 */

const DOCS_ASSETS = '/docs/assets';

/** Swagger UI needs `data:` images (its icons) and inline style attributes; nothing else beyond this origin. */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The vendor files the page loads, by the name it asks for. */
const VENDOR_FILES: Record<string, string> = {
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
};

const vendorDir = dirname(createRequire(fromRoot('package.json')).resolve('swagger-ui-dist/package.json'));

function secureHeaders(res: ServerResponse, contentType: string): void {
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Security-Policy', DOCS_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cache-Control', 'no-cache');
}

function page(title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${DOCS_ASSETS}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${DOCS_ASSETS}/swagger-ui-bundle.js"></script>
<script src="${DOCS_ASSETS}/docs.js"></script>
</body>
</html>
`;
}

/** Starts Swagger UI on the document; no validator (it would send the document to swagger.io). */
const initializer = (documentUrl: string) =>
  `window.ui = SwaggerUIBundle(${JSON.stringify({ url: documentUrl, dom_id: '#swagger-ui', validatorUrl: null, deepLinking: true })});\n`;

/** The `/docs` page as a route of its app (so its documents list it), for guests too: it holds no data. */
export function docsRoute(title: string) {
  return defineEndpoint({
    method: 'GET',
    path: '/docs',
    identities: [],
    input: noInput,
    produces: ['text/html'],
    handler: (_input, { res }) => {
      const html = 'text/html; charset=utf-8';
      secureHeaders(res, html);
      sendBody(res, 200, html, page(title));
      return undefined;
    },
  });
}

/** Serves the page's scripts and styles: the vendor's two files and the initializer, nothing else. */
export function mountDocsAssets(router: Router, documentUrl: string): void {
  const script = initializer(documentUrl);
  const asset: RequestHandler = (req, res, next) => {
    const file = String(req.params.file);
    if (file === 'docs.js') {
      secureHeaders(res, 'application/javascript; charset=utf-8');
      res.send(script);
      return;
    }
    const type = VENDOR_FILES[file];
    if (!type) return next(new ApiError('not_found', `no asset ${file}`));
    secureHeaders(res, type);
    res.setHeader('Cache-Control', 'public, max-age=86400');
    res.sendFile(file, { root: vendorDir }, (error) => error && next(error));
  };
  router.get(`${DOCS_ASSETS}/:file`, asset);
}
