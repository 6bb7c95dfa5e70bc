import Router from '@koa/router';
import type { AppDeps, AppState } from '../../context';
import { projectsRoutes } from './projects';
import { skillsRoutes } from './skills';
import { webhookDeliveriesRoutes } from './webhook-deliveries';
import { webhookEndpointsRoutes } from './webhook-endpoints';
import { workOrdersRoutes } from './work-orders';

/** Every REST resource; a new one is a `<resource>.ts` exporting its routes, added to this list. */
const RESOURCES = [projectsRoutes, workOrdersRoutes, skillsRoutes, webhookEndpointsRoutes, webhookDeliveriesRoutes];

/** Every REST route, under the version prefix of rest-api.md §9. */
export function restRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/v1' });
  for (const resource of RESOURCES) {
    const routes = resource(deps);
    router.use(routes.routes(), routes.allowedMethods({ throw: true }));
  }
  return router;
}
