import Router from '@koa/router';
import type { AppDeps, AppState } from '../../context';
import { RESOURCES } from '../../resources';
import { resourceRoutes } from '../../resources/resource';
import { mountRoute, parseRecordIds, type RouteSpec } from '../route-spec';
import { payrollRunRoutes } from './payroll-runs';
import { webhookDeliveryRoutes } from './webhook-deliveries';
import { webhookEndpointRoutes } from './webhook-endpoints';

/** Every REST route, relative to /api/v1: the collections' generic and own routes, payroll runs, then webhook management. */
export function restRouteSpecs(deps: AppDeps): RouteSpec[] {
  return [
    ...RESOURCES.flatMap((resource) => resourceRoutes(resource, deps)),
    ...payrollRunRoutes(deps),
    ...webhookEndpointRoutes(deps),
    ...webhookDeliveryRoutes(deps),
  ];
}

/** The REST router, under the version prefix of rest-api.md §9. */
export function restRoutes(deps: AppDeps, specs: RouteSpec[] = restRouteSpecs(deps)): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/v1' });
  parseRecordIds(router);
  for (const spec of specs) mountRoute(router, spec, deps.validator);
  return router;
}
