import Koa from 'koa';
import { consoleApp } from '../console/app';
import type { AppDeps, AppState } from './context';
import { authenticate } from './middleware/authenticate';
import { countRequests } from './middleware/count-requests';
import { errorHandler } from './middleware/error-handler';
import { readJsonBody, requireValidBody } from './middleware/json-body';
import { methodsFirst } from './middleware/methods-first';
import { rateLimit } from './middleware/rate-limit';
import { requestContext } from './middleware/request-context';
import { requestSpan } from './middleware/request-span';
import { securityHeaders } from './middleware/security-headers';
import { storableText } from './middleware/storable-text';
import { underPath } from './middleware/under-path';
import { buildOpenApiDocument } from './openapi';
import { docsRoutes } from './routes/docs';
import { healthRoutes, metricsRoutes } from './routes/health';
import { inboundRoutes } from './routes/inbound';
import { INBOUND_OPERATIONS } from './routes/inbound/operations';
import { restRoutes, restRouteSpecs } from './routes/rest';

/** Every router of the service; the API reference is built from the same route declarations. */
export function createRouters(deps: AppDeps) {
  const specs = restRouteSpecs(deps);
  const rest = restRoutes(deps, specs);
  return {
    health: healthRoutes(deps),
    metrics: metricsRoutes(deps),
    docs: docsRoutes(buildOpenApiDocument({ routes: specs, inbound: INBOUND_OPERATIONS, serverUrl: deps.config.publicBaseUrl })),
    restFiles: rest.files,
    rest: rest.json,
    inbound: inboundRoutes(deps),
  };
}

/**
 * The whole HTTP surface, in the order a request meets it:
 * the request's span → security headers → request id + logger + EntityManager → request metrics → error body → storable query text → health | metrics | API reference |
 * /api/v1 (auth → rate limit → 405 for unknown methods → routes taking a file | JSON body → resource routes; writes
 * behind Idempotency-Key) | /webhooks/inbound (its own chain: auth → scope → body bytes → signature → Idempotency-Key →
 * replay guard → rate limit → JSON) | /console (the account settings console: HTML pages behind a session, see
 * src/console/app.ts) → 404.
 */
export function createApp(deps: AppDeps): Koa<AppState> {
  const app = new Koa<AppState>();
  app.silent = true;
  app.proxy = deps.config.trustProxy;
  // Only the address the trusted proxy appended: earlier X-Forwarded-For entries are whatever the client sent.
  app.maxIpsCount = 1;
  const { health, metrics, docs, restFiles, rest, inbound } = createRouters(deps);

  app.use(requestSpan());
  app.use(securityHeaders());
  app.use(requestContext(deps));
  app.use(countRequests(deps.metrics, [health, metrics, docs, rest, inbound]));
  app.use(errorHandler());
  app.use(storableText());
  app.use(health.routes());
  app.use(health.allowedMethods());
  app.use(metrics.routes());
  app.use(docs.routes());
  app.use(docs.allowedMethods());
  app.use(
    underPath(
      '/api/v1',
      authenticate(deps.apiKeys),
      rateLimit('rest', { multiplier: deps.config.rateLimitMultiplier }),
      methodsFirst(restFiles, rest),
      restFiles.routes(),
      readJsonBody(deps.config.bodyLimitBytes),
      requireValidBody(),
      rest.routes(),
      rest.allowedMethods(),
    ),
  );
  app.use(inbound.routes());
  app.use(inbound.allowedMethods());
  app.use(underPath('/console', consoleApp(deps)));
  return app;
}
