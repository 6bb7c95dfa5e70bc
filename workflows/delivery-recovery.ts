import { proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import type { DeliveryRecoveryActivities } from '../activities/delivery-recovery';
import type { DeliveryRecoveryInput, DeliveryRecoveryResult } from './delivery-recovery.contract';

const steps = proxyActivities<DeliveryRecoveryActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 30 },
});

const BATCH_SIZE = 10;

/**
 * POST /webhook-endpoints/{id}/recover: re-runs the failed and cancelled deliveries the recovery took, a batch at a
 * time, recording its progress (the recovery's `requested`) after each batch; a worker that dies resumes after the
 * last recorded batch.
 */
export async function deliveryRecovery(input: DeliveryRecoveryInput): Promise<DeliveryRecoveryResult> {
  for (;;) {
    const progress = await steps.rerunRecoveryBatch({ recoveryId: input.recoveryId, batchSize: BATCH_SIZE });
    setCurrentDetails(`Re-run requested for ${progress.requested} of ${progress.total} deliveries.`);
    if (progress.requested >= progress.total) return progress;
  }
}
