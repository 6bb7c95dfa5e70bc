import type { Middleware } from 'koa';
import type { AppState } from '../context';

/**
 * On every response: no MIME sniffing, and no caching by browsers or proxies. API responses carry keys,
 * signing secrets and tenant data; a route serving a static asset may opt back in to caching.
 */
export function securityHeaders(): Middleware<AppState> {
  return async (ctx, next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Cache-Control', 'no-store');
    await next();
  };
}
