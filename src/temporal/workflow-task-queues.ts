import { DELIVERY_RECOVERY, DELIVERY_RECOVERY_TASK_QUEUE } from '../../workflows/delivery-recovery.contract';
import { PAYROLL_RUN, PAYROLL_RUN_TASK_QUEUE } from '../../workflows/payroll-run.contract';
import { PROJECT_CLOSING, PROJECT_CLOSING_TASK_QUEUE } from '../../workflows/project-closing.contract';
import { PROJECT_CREATION, PROJECT_CREATION_TASK_QUEUE } from '../../workflows/project-creation.contract';
import { PURCHASE_ORDER_APPROVAL, PURCHASE_ORDER_APPROVAL_TASK_QUEUE } from '../../workflows/purchase-order-approval.contract';
import { REPORT_APPROVAL, REPORT_APPROVAL_TASK_QUEUE } from '../../workflows/report-approval.contract';
import { RETENTION, RETENTION_TASK_QUEUE } from '../../workflows/retention.contract';
import { SCHEDULED_REPORT, SCHEDULED_REPORT_TASK_QUEUE } from '../../workflows/scheduled-report.contract';
import { WEBHOOK_DELIVERY, WEBHOOK_DELIVERY_TASK_QUEUE } from '../../workflows/webhook-delivery.contract';
import type { TaskQueueRole, TaskQueues } from '../task-queues';

/** Each workflow type's task queue, as its contract says. */
export const WORKFLOW_TASK_QUEUES: Record<string, TaskQueueRole> = {
  [DELIVERY_RECOVERY]: DELIVERY_RECOVERY_TASK_QUEUE,
  [PAYROLL_RUN]: PAYROLL_RUN_TASK_QUEUE,
  [PROJECT_CLOSING]: PROJECT_CLOSING_TASK_QUEUE,
  [PROJECT_CREATION]: PROJECT_CREATION_TASK_QUEUE,
  [PURCHASE_ORDER_APPROVAL]: PURCHASE_ORDER_APPROVAL_TASK_QUEUE,
  [REPORT_APPROVAL]: REPORT_APPROVAL_TASK_QUEUE,
  [RETENTION]: RETENTION_TASK_QUEUE,
  [SCHEDULED_REPORT]: SCHEDULED_REPORT_TASK_QUEUE,
  [WEBHOOK_DELIVERY]: WEBHOOK_DELIVERY_TASK_QUEUE,
};

/** The configured name of the task queue `workflowType` runs on. */
export function taskQueueOf(workflowType: string, queues: TaskQueues): string {
  const role = WORKFLOW_TASK_QUEUES[workflowType];
  if (!role) throw new Error(`No task queue for workflow type "${workflowType}": its contract names one, and src/temporal/workflow-task-queues.ts lists it`);
  return queues[role];
}
