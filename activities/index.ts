import { withActivityFailures } from '../src/temporal/failures';
import type { ActivityDeps } from './deps';
import { createDeliveryRecoveryActivities } from './delivery-recovery';
import { createDeliveryRunActivities } from './webhook-delivery';
import { createPayrollRunActivities } from './payroll-run';
import { createProjectClosingActivities } from './project-closing';
import { createProjectCreationActivities } from './project-creation';
import { createPurchaseOrderApprovalActivities } from './purchase-order-approval';
import { createReportApprovalActivities } from './report-approval';
import { createScheduledReportActivities } from './scheduled-report';
import { createRetentionActivities } from './retention';

export type { ActivityDeps } from './deps';

/** Every activity the worker registers, bound to its dependencies. */
export function createActivities(deps: ActivityDeps) {
  return withActivityFailures({
    ...createProjectCreationActivities(deps),
    ...createProjectClosingActivities(deps),
    ...createPayrollRunActivities(deps),
    ...createReportApprovalActivities(deps),
    ...createPurchaseOrderApprovalActivities(deps),
    ...createScheduledReportActivities(deps),
    ...createDeliveryRunActivities(deps),
    ...createDeliveryRecoveryActivities(deps),
    ...createRetentionActivities(deps),
  });
}
