import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ApiMetrics } from '../../metrics';
import type { AppState } from '../context';

/**
 * Counts every answered request by method, route and status. The route is the path template
 * (`/api/v1/customers/:id`), so ids do not make a label value each; a request refused before its route ran (401,
 * 429, 413, 405) is counted under the route it asked for, and one no route matches under `unmatched`.
 */
export function countRequests(metrics: ApiMetrics, routers: Router<AppState>[]): Middleware<AppState> {
  const routeOf = (path: string, method: string): string => {
    for (const router of routers) {
      // Layers matching the path whatever the method, so a 405 is counted under its route too.
      const layer = router.match(path, method).path.filter((l) => l.methods.length > 0).at(-1);
      if (layer && typeof layer.path === 'string') return layer.path;
    }
    return 'unmatched';
  };
  return async (ctx, next) => {
    ctx.state.metrics = metrics;
    try {
      await next();
    } finally {
      // Set by whichever router ran the request (the console's too); else found from the API's routers.
      const matched = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
      metrics.requests.inc({ method: ctx.method, route: typeof matched === 'string' ? matched : routeOf(ctx.path, ctx.method), status: String(ctx.status) });
    }
  };
}
