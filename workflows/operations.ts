/**
 * The workflows of the operations task queue (their contracts say `taskQueue: 'operations'`): the bundle its Workers
 * load (src/worker/workflow-bundle.ts).
 */
export { payrollRun } from './payroll-run';
export { projectClosing } from './project-closing';
export { projectCreation } from './project-creation';
export { purchaseOrderApproval } from './purchase-order-approval';
export { reportApproval } from './report-approval';
export { scheduledReport } from './scheduled-report';
export { retention } from './retention';
