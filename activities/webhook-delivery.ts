import type { EntityManager } from '@mikro-orm/postgresql';
import type { AttemptOutcome } from '../src/domain/webhooks/delivery-attempt.entity';
import { WebhookAlert } from '../src/domain/webhooks/webhook-alert.entity';
import { WebhookDelivery } from '../src/domain/webhooks/webhook-delivery.entity';
import type { WebhookEndpoint } from '../src/domain/webhooks/webhook-endpoint.entity';
import type { Logger } from '../src/logger';
import type { WebhookResult } from '../src/webhooks/webhook-sender';

/** 2xx delivered; 4xx (and a target we refuse to contact) permanent; 5xx, 3xx, timeouts, network errors retried. */
export function classify(result: WebhookResult): Exclude<AttemptOutcome, 'in_progress'> {
  if (result.failureKind === null) return 'succeeded';
  if (result.failureKind === 'blocked') return 'permanent_failure';
  if (result.failureKind === 'http' && result.statusCode !== null && result.statusCode < 500) return 'permanent_failure';
  return 'retryable_failure';
}

/** What an attempt to an endpoint that is not active comes to: a permanent failure, without sending. */
export function endpointNotActive(endpoint: WebhookEndpoint): WebhookResult {
  const reason = endpoint.disabledReason ? `: ${endpoint.disabledReason}` : '';
  return { statusCode: null, durationMs: 0, error: `endpoint is ${endpoint.status}${reason}`, failureKind: 'blocked', responseExcerpt: null, retryAfterMs: null };
}

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
