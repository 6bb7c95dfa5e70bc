/** Every workflow the worker runs; the bundler starts from this file. */
export { deliveryRecovery } from './delivery-recovery';
export { payrollRun } from './payroll-run';
export { projectClosing } from './project-closing';
export { projectCreation } from './project-creation';
export { purchaseOrderApproval } from './purchase-order-approval';
export { reportApproval } from './report-approval';
export { scheduledReport } from './scheduled-report';
export { retention } from './retention';
export { webhookDelivery } from './webhook-delivery';
