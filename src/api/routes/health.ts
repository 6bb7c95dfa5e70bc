import Router from '@koa/router';
import type { AppDeps, AppState } from '../context';

/** GET /health: unauthenticated; 200 when PostgreSQL and Temporal answer, else 503 naming the one that did not. */
export function healthRoutes({ orm, temporal }: AppDeps): Router<AppState> {
  const router = new Router<AppState>();
  router.get('/health', async (ctx) => {
    const [database, workflows] = await Promise.all([
      orm.em.getConnection().execute('select 1').then(() => 'ok', () => 'unavailable'),
      temporal.workflowService.getSystemInfo({}).then(() => 'ok', () => 'unavailable'),
    ]);
    ctx.status = database === 'ok' && workflows === 'ok' ? 200 : 503;
    ctx.body = { status: ctx.status === 200 ? 'ok' : 'degraded', database, temporal: workflows };
  });
  return router;
}

/** GET /metrics: unauthenticated Prometheus metrics of this API process (docs/operations.md); keep it off the internet. */
export function metricsRoutes({ metrics }: AppDeps): Router<AppState> {
  const router = new Router<AppState>();
  router.get('/metrics', async (ctx) => {
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
  return router;
}
