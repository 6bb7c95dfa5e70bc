/** Every workflow the worker runs; the bundler starts from this file. */
export { deliveryRecovery } from './delivery-recovery';
export { payrollRun } from './payroll-run';
export { projectClosing } from './project-closing';
export { projectCreation } from './project-creation';
export { webhookDelivery } from './webhook-delivery';
