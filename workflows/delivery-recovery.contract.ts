import { workflowDef } from '../src/domain/workflow-contract';

/**
 * A bulk recovery (POST /webhook-endpoints/{id}/recover), one run per recovery (id `webhook-recovery/<recovery id>`),
 * on the deliveries task queue. Started by startRecovery (src/delivery/deliveries-service.ts). No signals or updates.
 */
export const DELIVERY_RECOVERY = workflowDef<DeliveryRecoveryInput, DeliveryRecoveryResult>()({ name: 'deliveryRecovery', taskQueue: 'deliveries' });

export const recoveryWorkflowId = (recoveryId: string) => `webhook-recovery/${recoveryId}`;

export interface DeliveryRecoveryInput {
  recoveryId: string;
}

export interface DeliveryRecoveryResult {
  total: number;
  requested: number;
}
