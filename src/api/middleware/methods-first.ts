import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { ApiError } from '../../errors';
import type { AppState } from '../context';

/**
 * 405 (with Allow) for a path the routers know and a method none of them takes, before any body is read: a file
 * sent with the wrong method is told so, not that its type is not JSON. OPTIONS is left to the routers.
 */
export function methodsFirst(...routers: Router<AppState>[]): Middleware<AppState> {
  return (ctx, next) => {
    if (ctx.method === 'OPTIONS') return next();
    const matches = routers.map((router) => router.match(ctx.path, ctx.method));
    if (matches.some((m) => m.route) || !matches.some((m) => m.path.length > 0)) return next();
    const allowed = [...new Set(matches.flatMap((m) => m.path.flatMap((layer) => layer.methods)))].join(', ');
    throw new ApiError('METHOD_NOT_ALLOWED', `${ctx.method} is not supported on ${ctx.path}`, { field: 'method', reason: `not allowed; allowed: ${allowed}` }, { Allow: allowed });
  };
}
