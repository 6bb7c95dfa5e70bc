/** Every workflow the worker runs; the bundler starts from this file. */
export { payrollRun } from './payroll-run';
export { projectClosing } from './project-closing';
export { projectCreation } from './project-creation';
export { retention } from './retention';
export { webhookDelivery } from './webhook-delivery';
