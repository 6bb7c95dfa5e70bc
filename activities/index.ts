import { withActivityFailures } from '../src/temporal/failures';
import type { WorkflowName } from '../workflows/contracts';
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

type Activities = Record<string, (...args: never[]) => Promise<unknown>>;

/** Each workflow's activities, by the workflow's name: a workflow of workflows/contracts.ts without them does not compile. */
const ACTIVITIES_OF = {
  deliveryRecovery: createDeliveryRecoveryActivities,
  payrollRun: createPayrollRunActivities,
  projectClosing: createProjectClosingActivities,
  projectCreation: createProjectCreationActivities,
  purchaseOrderApproval: createPurchaseOrderApprovalActivities,
  reportApproval: createReportApprovalActivities,
  retention: createRetentionActivities,
  scheduledReport: createScheduledReportActivities,
  webhookDelivery: createDeliveryRunActivities,
} satisfies Record<WorkflowName, (deps: ActivityDeps) => Activities>;

/** Every activity the worker registers, bound to its dependencies. */
export function createActivities(deps: ActivityDeps): Activities {
  return withActivityFailures(Object.assign({}, ...Object.values(ACTIVITIES_OF).map((create) => create(deps))) as Activities);
}
