import type { Middleware } from 'koa';
import type { ApiMetrics } from '../../metrics';
import type { AppState } from '../context';

/**
 * Counts every answered request by method, route and status. The route is the matched path template
 * (`/api/v1/customers/:id`), so ids do not make a label value each; requests no route matched count as `unmatched`.
 */
export function countRequests(metrics: ApiMetrics): Middleware<AppState> {
  return async (ctx, next) => {
    ctx.state.metrics = metrics;
    try {
      await next();
    } finally {
      const route = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
      metrics.requests.inc({ method: ctx.method, route: typeof route === 'string' ? route : 'unmatched', status: String(ctx.status) });
    }
  };
}
