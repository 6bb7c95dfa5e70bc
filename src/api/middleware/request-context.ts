import type { EntityManager } from '@mikro-orm/postgresql';
import type { Middleware } from 'koa';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { AppDeps, AppState } from '../context';

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._-]{1,100}$/;

/** Request id (the client's X-Request-Id when sane), a request-scoped logger and EntityManager, access log. */
export function requestContext(deps: Pick<AppDeps, 'orm' | 'logger'>): Middleware<AppState> {
  return async (ctx, next) => {
    const incoming = ctx.get('X-Request-Id');
    const requestId = CLIENT_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    ctx.state.log = deps.logger.child({ requestId });
    ctx.state.em = deps.orm.em.fork() as EntityManager;
    const started = performance.now();
    try {
      await next();
    } finally {
      ctx.state.log.info(
        { method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round((performance.now() - started) * 10) / 10 },
        'request',
      );
    }
  };
}
