import { DELIVERY_RECOVERY } from './delivery-recovery.contract';
import { PAYROLL_RUN } from './payroll-run.contract';
import { PROJECT_CLOSING } from './project-closing.contract';
import { PROJECT_CREATION } from './project-creation.contract';
import { PURCHASE_ORDER_APPROVAL } from './purchase-order-approval.contract';
import { REPORT_APPROVAL } from './report-approval.contract';
import { RETENTION } from './retention.contract';
import { SCHEDULED_REPORT } from './scheduled-report.contract';
import { WEBHOOK_DELIVERY } from './webhook-delivery.contract';

/**
 * Every workflow the service runs, by its contract: the one list of workflows. src/temporal finds a workflow type's
 * task queue here; the compiler holds the bundle (workflows/index.ts) and the worker's activities (activities/index.ts)
 * to it (test/types/workflow-registries.ts), and the registries test holds the folder to it.
 */
export const WORKFLOWS = [
  DELIVERY_RECOVERY,
  PAYROLL_RUN,
  PROJECT_CLOSING,
  PROJECT_CREATION,
  PURCHASE_ORDER_APPROVAL,
  REPORT_APPROVAL,
  RETENTION,
  SCHEDULED_REPORT,
  WEBHOOK_DELIVERY,
] as const;

export type AnyWorkflow = (typeof WORKFLOWS)[number];
export type WorkflowName = AnyWorkflow['name'];
