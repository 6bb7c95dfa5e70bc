import Koa from 'koa';
import type { AppDeps, AppState } from './context';
import { authenticate } from './middleware/authenticate';
import { errorHandler } from './middleware/error-handler';
import { jsonBody } from './middleware/json-body';
import { rateLimit } from './middleware/rate-limit';
import { requestContext } from './middleware/request-context';
import { underPath } from './middleware/under-path';
import { healthRoutes } from './routes/health';
import { inboundRoutes } from './routes/inbound';
import { restRoutes } from './routes/rest';

/**
 * The whole HTTP surface, in the order a request meets it:
 * request id + logger + EntityManager → error body → health | /api/v1 (auth → rate limit → JSON body →
 * resource routes) | /webhooks/inbound (its own chain: auth → scope → rate limit → body → signature) → 404.
 */
export function createApp(deps: AppDeps): Koa<AppState> {
  const app = new Koa<AppState>();
  app.silent = true;
  const health = healthRoutes(deps);
  const rest = restRoutes(deps);
  const inbound = inboundRoutes(deps);

  app.use(requestContext(deps));
  app.use(errorHandler());
  app.use(health.routes());
  app.use(
    underPath(
      '/api/v1',
      authenticate(),
      rateLimit('rest'),
      jsonBody(deps.config.bodyLimitBytes),
      rest.routes(),
      rest.allowedMethods({ throw: true }),
    ),
  );
  app.use(inbound.routes());
  app.use(inbound.allowedMethods({ throw: true }));
  return app;
}
