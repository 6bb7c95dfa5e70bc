import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '../logger';
import { WebhookAlert } from './webhook-alert.entity';
import { WebhookDelivery } from './webhook-delivery.entity';

/** An alert is about a delivery that has not reached its subscriber: once it has, the alert is resolved. */
export async function resolveDeliveryAlerts(em: EntityManager, deliveryId: string): Promise<void> {
  await em.execute('update webhook_alerts set resolved_at = now() where delivery_id = ? and resolved_at is null', [deliveryId]);
}

/** Marks a delivery failed (unless it was delivered meanwhile) and raises its alert once per failure. */
export async function markFailed(em: EntityManager, logger: Logger, deliveryId: string, raiseAlert: boolean): Promise<void> {
  const delivery = await em.findOneOrFail(WebhookDelivery, { id: deliveryId }, { populate: ['endpoint'] });
  if (delivery.status === 'delivered') return;
  Object.assign(delivery, { status: 'failed', failedAt: delivery.failedAt ?? new Date(), nextAttemptAt: null });
  if (raiseAlert) {
    const message =
      `Delivery ${delivery.id} of ${delivery.eventType} to ${delivery.endpoint.getEntity().url} failed after ` +
      `${delivery.attemptCount} attempt(s): ${delivery.lastError ?? 'unknown error'}`;
    const existing = await em.count(WebhookAlert, { delivery, attemptCount: delivery.attemptCount });
    if (existing === 0) {
      em.create(WebhookAlert, { company: delivery.company, delivery, endpoint: delivery.endpoint, attemptCount: delivery.attemptCount, message });
      logger.warn({ deliveryId: delivery.id, endpointId: delivery.endpoint.id, companyId: delivery.company.id, alert: 'webhook_delivery_failed' }, message);
    }
  }
  await em.flush();
}
