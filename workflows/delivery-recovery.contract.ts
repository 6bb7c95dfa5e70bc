import type { TaskQueueRole } from '../src/task-queues';

/**
 * A bulk recovery (POST /webhook-endpoints/{id}/recover), one run per recovery (id `webhook-recovery/<recovery id>`),
 * on the deliveries task queue. Started by startRecovery (src/delivery/deliveries-service.ts). No signals or updates.
 */
export const DELIVERY_RECOVERY = 'deliveryRecovery';

/** The task queue it and its activities run on (TEMPORAL_DELIVERIES_TASK_QUEUE names it). */
export const DELIVERY_RECOVERY_TASK_QUEUE: TaskQueueRole = 'deliveries';

export const recoveryWorkflowId = (recoveryId: string) => `webhook-recovery/${recoveryId}`;

export interface DeliveryRecoveryInput {
  recoveryId: string;
}

export interface DeliveryRecoveryResult {
  total: number;
  requested: number;
}
