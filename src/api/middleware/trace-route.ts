import { trace } from '@opentelemetry/api';
import type { Middleware } from 'koa';
import type { AppState } from '../context';

/**
 * Names the request's span (the HTTP instrumentation's) by the route that took it, `POST /webhooks/inbound` or
 * `GET /api/v1/customers/:id`, as the request metrics do: ids do not make a span name each. A request no route took
 * keeps the method alone. Nothing to do while tracing is off.
 */
export function traceRoute(): Middleware<AppState> {
  return async (ctx, next) => {
    try {
      await next();
    } finally {
      const span = trace.getActiveSpan();
      const route = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
      if (span && typeof route === 'string') {
        span.setAttribute('http.route', route);
        span.updateName(`${ctx.method} ${route}`);
      }
    }
  };
}
