import Router from '@koa/router';
import { readFileSync } from 'node:fs';
import type { AppState } from '../context';

/** The Redoc bundle from node_modules: the reference page needs nothing from the internet. */
const REDOC_BUNDLE = require.resolve('redoc/bundles/redoc.standalone.js');

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Construction integration service: API reference</title>
  </head>
  <body>
    <div id="reference"></div>
    <script src="/docs/redoc.standalone.js"></script>
    <script src="/docs/init.js"></script>
  </body>
</html>
`;

const INIT = "Redoc.init('/api/v1/openapi.json', { expandResponses: '200,201' }, document.getElementById('reference'));\n";

/**
 * Everything from this server: Redoc's styles are injected inline, its search runs in a blob worker, and the
 * policy keeps its "powered by" logo (and anything else) from being fetched from a CDN.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "worker-src 'self' blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** GET /api/v1/openapi.json and the reference page at /docs; public, like the spec they render. */
export function docsRoutes(document: object): Router<AppState> {
  const json = JSON.stringify(document);
  const bundle = readFileSync(REDOC_BUNDLE);
  const router = new Router<AppState>();
  router.get('/api/v1/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = json;
  });
  router.get('/docs', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    ctx.body = PAGE;
  });
  router.get('/docs/init.js', (ctx) => {
    ctx.type = 'application/javascript; charset=utf-8';
    ctx.body = INIT;
  });
  router.get('/docs/redoc.standalone.js', (ctx) => {
    ctx.type = 'application/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = bundle;
  });
  return router;
}
