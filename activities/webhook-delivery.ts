import { ApplicationFailure, Context } from '@temporalio/activity';
import type { EntityManager } from '@mikro-orm/postgresql';
import { type AttemptOutcome, type AttemptTrigger, DeliveryAttempt } from '../src/domain/webhooks/delivery-attempt.entity';
import { WebhookAlert } from '../src/domain/webhooks/webhook-alert.entity';
import { WebhookDelivery } from '../src/domain/webhooks/webhook-delivery.entity';
import type { WebhookEndpoint } from '../src/domain/webhooks/webhook-endpoint.entity';
import type { Logger } from '../src/logger';
import { deliveryHeaders, signingSecrets } from '../src/webhooks/delivery-headers';
import type { WebhookResult } from '../src/webhooks/webhook-sender';
import type { ActivityDeps } from './deps';

/** About 25 minutes of activity retries (1 s doubling to 1 min) before a missing delivery is given up. */
const MISSING_DELIVERY_ATTEMPTS = 30;

export interface AttemptInput {
  deliveryId: string;
  /** Sent as X-Webhook-Retry. */
  attemptNumber: number;
  trigger: AttemptTrigger;
  /** When the workflow will try again after a retryable failure; null when this is the last attempt. */
  nextAttemptInMs: number | null;
}

export interface AttemptSummary {
  outcome: Exclude<AttemptOutcome, 'in_progress'>;
  statusCode: number | null;
}

/** 2xx delivered; 4xx (and a target we refuse to contact) permanent; 5xx, 3xx, timeouts, network errors retried. */
export function classify(result: WebhookResult): AttemptSummary['outcome'] {
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

/** The activities of runs begun before DELIVERY_RUNS_PATCH (workflows/webhook-delivery-legacy.ts). */
export function createWebhookDeliveryActivities({ orm, logger, secretBox, sender }: ActivityDeps) {
  return {
    /**
     * Runs begun before DELIVERY_RUNS_PATCH only. One signed POST of the delivery's stored body, recorded as
     * attempt `attemptNumber`. A retry after a crash re-sends and overwrites that attempt's row.
     */
    async attemptDelivery(input: AttemptInput): Promise<AttemptSummary> {
      const em = orm.em.fork();
      const delivery = await em.findOne(WebhookDelivery, { id: input.deliveryId }, { populate: ['endpoint'] });
      // The dispatcher starts workflows just before it commits the rows: retry for a while, then give up.
      if (!delivery) {
        const message = `Delivery ${input.deliveryId} does not exist`;
        if (Context.current().info.attempt >= MISSING_DELIVERY_ATTEMPTS) throw ApplicationFailure.nonRetryable(message, 'DELIVERY_NOT_FOUND');
        throw new Error(`${message} (yet)`);
      }
      if (delivery.status === 'delivered') return { outcome: 'succeeded', statusCode: delivery.lastStatusCode };
      const endpoint = delivery.endpoint.getEntity();

      const attempt =
        (await em.findOne(DeliveryAttempt, { delivery, attemptNumber: input.attemptNumber })) ??
        em.create(DeliveryAttempt, { company: delivery.company, delivery, attemptNumber: input.attemptNumber, trigger: input.trigger });
      // Visible as in progress while the request is out.
      await em.flush();

      const result: WebhookResult =
        endpoint.status === 'active'
          ? await sender.send({
              url: endpoint.url,
              body: delivery.payload,
              headers: deliveryHeaders(signingSecrets(endpoint, secretBox), delivery, input.attemptNumber),
              onProgress: () => Context.current().heartbeat(),
            })
          : endpointNotActive(endpoint);

      const outcome = classify(result);
      const now = new Date();
      Object.assign(attempt, {
        outcome,
        statusCode: result.statusCode,
        durationMs: Math.round(result.durationMs),
        error: result.error,
        responseExcerpt: result.responseExcerpt,
        finishedAt: now,
      });
      Object.assign(delivery, {
        attemptCount: Math.max(delivery.attemptCount, input.attemptNumber + 1),
        lastAttemptAt: now,
        lastStatusCode: result.statusCode,
        lastError: result.error,
        nextAttemptAt: null,
      });
      if (outcome === 'succeeded') {
        Object.assign(delivery, { status: 'delivered', deliveredAt: now, failedAt: null });
      } else if (outcome === 'retryable_failure' && input.nextAttemptInMs !== null) {
        Object.assign(delivery, { status: 'retrying', nextAttemptAt: new Date(now.getTime() + input.nextAttemptInMs) });
      }
      await em.flush();
      if (outcome === 'succeeded') await resolveDeliveryAlerts(em, delivery.id);
      return { outcome, statusCode: result.statusCode };
    },

    /** Marks the delivery failed and, unless it was a test, raises an alert: a row operators can list, and a log line. */
    async markDeliveryFailed(input: { deliveryId: string; raiseAlert: boolean }): Promise<void> {
      await markFailed(orm.em.fork(), logger, input.deliveryId, input.raiseAlert);
    },
  };
}

export type WebhookDeliveryActivities = ReturnType<typeof createWebhookDeliveryActivities>;
