import { withActivityFailures } from '../src/temporal/failures';
import type { ActivityDeps } from './deps';
import { createPayrollRunActivities } from './payroll-run';
import { createProjectClosingActivities } from './project-closing';
import { createProjectCreationActivities } from './project-creation';
import { createRetentionActivities } from './retention';
import { createWebhookDeliveryActivities } from './webhook-delivery';

export type { ActivityDeps } from './deps';

/** Every activity the worker registers, bound to its dependencies. */
export function createActivities(deps: ActivityDeps) {
  return withActivityFailures({
    ...createProjectCreationActivities(deps),
    ...createProjectClosingActivities(deps),
    ...createPayrollRunActivities(deps),
    ...createWebhookDeliveryActivities(deps),
    ...createRetentionActivities(deps),
  });
}
