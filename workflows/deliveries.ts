/**
 * The workflows of the deliveries task queue (their contracts say `taskQueue: 'deliveries'`): the bundle its Workers
 * load (src/worker/workflow-bundle.ts). Apart from the operations queue's, as every run evaluates its bundle's modules
 * afresh in the sandbox: a delivery's first workflow task spent a tenth of the worker's CPU of a delivery on the other
 * workflows' modules (docs/benchmarks.md, phase 12).
 */
export { deliveryRecovery } from './delivery-recovery';
export { webhookDelivery } from './webhook-delivery';
