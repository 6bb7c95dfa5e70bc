import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Middleware } from 'koa';
import { activeTracing } from '../../observability/tracing';
import type { AppState } from '../context';

/** Requests that come often and say nothing about a change: health checks and metrics scrapes. */
const UNTRACED_PATHS = new Set(['/health', '/metrics']);

/**
 * The request's span, a child of the caller's `traceparent` when it sends one, named by the route that took the
 * request (`POST /webhooks/inbound`, `GET /api/v1/customers/:id`; the method alone when none did): ids do not make a
 * span name each. Made here through the OpenTelemetry API rather than by the HTTP instrumentation, whose hooks on every
 * request cost more than the span (a traced api kept 0.74 of an untraced one's list throughput with it, 0.81 with
 * this; docs/benchmarks.md, phase 10). The URL is recorded without its query string, and neither the client's
 * address nor its user agent. Nothing to do while tracing is off.
 */
export function requestSpan(): Middleware<AppState> {
  return async (ctx, next) => {
    if (!activeTracing() || UNTRACED_PATHS.has(ctx.path)) return next();
    const parent = propagation.extract(ROOT_CONTEXT, ctx.headers);
    // The tracer of the provider running now (a map lookup): tracing may have been restarted since the last request.
    const span = trace.getTracer('construction-integration-http').startSpan(
      ctx.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.method': ctx.method,
          'http.scheme': ctx.protocol,
          'http.target': ctx.path,
          'http.url': `${ctx.protocol}://${ctx.host}${ctx.path}`,
          'http.flavor': ctx.req.httpVersion,
          'net.host.name': ctx.hostname,
        },
      },
      parent,
    );
    // Ended once the response is written or the connection is lost, as a body streamed after the middleware returns counts.
    ctx.res.once('close', () => {
      span.setAttribute('http.status_code', ctx.res.statusCode);
      if (ctx.res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    try {
      await context.with(trace.setSpan(parent, span), next);
    } finally {
      const route = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
      if (typeof route === 'string') {
        span.setAttribute('http.route', route);
        span.updateName(`${ctx.method} ${route}`);
      }
    }
  };
}
