import { WebhookDelivery } from '../src/delivery/webhook-delivery.entity';
import { WebhookRecovery } from '../src/delivery/webhook-recovery.entity';
import { deliveryToStart, RERUNNABLE_STATUSES } from '../src/delivery/deliveries-service';
import { RerunRefused } from '../src/delivery/delivery-workflows';
import type { ActivityDeps } from './deps';

export function createDeliveryRecoveryActivities({ orm, deliveryWorkflows }: ActivityDeps) {
  return {
    /**
     * Asks for a re-run of the next `batchSize` deliveries of the recovery (those still failed or cancelled; the
     * others were re-run or delivered meanwhile) and records how far it got. Asking twice for one delivery after a
     * crash costs at most one more attempt, with the same X-Webhook-ID.
     */
    async rerunRecoveryBatch({ recoveryId, batchSize }: { recoveryId: string; batchSize: number }): Promise<{ total: number; requested: number }> {
      const em = orm.em.fork();
      const recovery = await em.findOneOrFail(WebhookRecovery, { id: recoveryId });
      const batch = recovery.deliveryIds.slice(recovery.requested, recovery.requested + batchSize);
      const deliveries = await em.find(WebhookDelivery, { id: { $in: batch }, status: { $in: [...RERUNNABLE_STATUSES] } }, { populate: ['endpoint'] });
      for (const delivery of deliveries) {
        try {
          await deliveryWorkflows.requestRerun(deliveryToStart(delivery), { reason: `bulk recovery ${recoveryId}` }, 0);
        } catch (error) {
          // Refused because an attempt is being made right now: it is being re-run already.
          if (!(error instanceof RerunRefused)) throw error;
        }
      }
      recovery.requested += batch.length;
      if (recovery.requested >= recovery.deliveryIds.length) Object.assign(recovery, { status: 'completed', completedAt: new Date() });
      await em.flush();
      return { total: recovery.deliveryIds.length, requested: recovery.requested };
    },
  };
}

export type DeliveryRecoveryActivities = ReturnType<typeof createDeliveryRecoveryActivities>;
