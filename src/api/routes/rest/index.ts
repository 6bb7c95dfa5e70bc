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

/**
 * The REST routers, under the version prefix of rest-api.md §9: the routes that take a file (mounted ahead of the
 * JSON body reader), and the others.
 */
export function restRoutes(deps: AppDeps, specs: RouteSpec[] = restRouteSpecs(deps)): { files: Router<AppState>; json: Router<AppState> } {
  const router = (of: RouteSpec[]) => {
    const mounted = new Router<AppState>({ prefix: '/api/v1' });
    parseRecordIds(mounted);
    for (const spec of of) mountRoute(mounted, spec, deps.validator);
    return mounted;
  };
  return { files: router(specs.filter((s) => s.file)), json: router(specs.filter((s) => !s.file)) };
}
