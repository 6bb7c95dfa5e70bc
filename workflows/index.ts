/** Every workflow the worker runs; the bundler starts from this file. */
export { projectCreation } from './project-creation';
export { webhookDelivery } from './webhook-delivery';
