import Router from '@koa/router';
import { WEBHOOKS_MANAGE_SCOPE } from '../../../domain/accounts/scopes';
import type { DeliveryAttempt } from '../../../domain/webhooks/delivery-attempt.entity';
import { getDelivery, listAlerts, listAttempts, listDeliveries, rerunDelivery } from '../../../domain/webhooks/deliveries-service';
import type { WebhookAlert } from '../../../domain/webhooks/webhook-alert.entity';
import { DELIVERY_STATUSES, type DeliveryStatus, type WebhookDelivery } from '../../../domain/webhooks/webhook-delivery.entity';
import { ApiError } from '../../../errors';
import { iso } from '../../../events/payloads/format';
import { idOf, type View } from '../../../domain/page';
import type { AppDeps, AppState } from '../../context';
import { requireScope } from '../../middleware/authenticate';
import { listBody, parsePage } from '../../pagination';
import { recordId } from '../../record-id';

export function attemptJson(attempt: DeliveryAttempt) {
  return {
    attempt_number: attempt.attemptNumber,
    trigger: attempt.trigger,
    outcome: attempt.outcome,
    status_code: attempt.statusCode,
    duration_ms: attempt.durationMs,
    error: attempt.error,
    response_excerpt: attempt.responseExcerpt,
    started_at: attempt.createdAt.toISOString(),
    finished_at: iso(attempt.finishedAt),
  };
}

/** A delivery as the API shows it: what was sent, where, and how it went; its attempts when given. */
export function deliveryJson(delivery: View<WebhookDelivery>, attempts?: DeliveryAttempt[]) {
  return {
    id: delivery.id,
    endpoint_id: idOf(delivery.endpoint),
    event_id: idOf(delivery.event),
    event_type: delivery.eventType,
    is_test: delivery.isTest,
    status: delivery.status,
    attempt_count: delivery.attemptCount,
    last_attempt_at: iso(delivery.lastAttemptAt),
    last_status_code: delivery.lastStatusCode,
    last_error: delivery.lastError,
    next_attempt_at: iso(delivery.nextAttemptAt),
    delivered_at: iso(delivery.deliveredAt),
    failed_at: iso(delivery.failedAt),
    created_at: delivery.createdAt.toISOString(),
    payload: JSON.parse(delivery.payload) as unknown,
    ...(attempts ? { attempts: attempts.map(attemptJson) } : {}),
  };
}

function alertJson(alert: View<WebhookAlert>) {
  return {
    id: alert.id,
    delivery_id: idOf(alert.delivery),
    endpoint_id: idOf(alert.endpoint),
    attempt_count: alert.attemptCount,
    message: alert.message,
    created_at: alert.createdAt.toISOString(),
  };
}

function deliveryFilters(query: Record<string, string | string[] | undefined>) {
  const one = (name: string) => {
    const value = query[name];
    if (Array.isArray(value)) throw ApiError.invalid(name, 'must be given once');
    return value || undefined;
  };
  const endpointId = one('endpoint_id');
  if (endpointId !== undefined && !/^[0-9a-f-]{36}$/i.test(endpointId)) throw ApiError.invalid('endpoint_id', 'must be a UUID');
  const status = one('status');
  if (status !== undefined && !(DELIVERY_STATUSES as readonly string[]).includes(status)) {
    throw ApiError.invalid('status', `must be one of: ${DELIVERY_STATUSES.join(', ')}`);
  }
  return { endpointId, status: status as DeliveryStatus | undefined, eventType: one('event_type') };
}

/** Delivery logs, re-runs and alerts of outbound webhooks (scope webhooks:manage). */
export function webhookDeliveriesRoutes({ validator, temporal, config }: AppDeps): Router<AppState> {
  const router = new Router<AppState>();
  const manage = requireScope(WEBHOOKS_MANAGE_SCOPE);

  router.get('/webhook-deliveries', manage, async (ctx) => {
    const page = parsePage(ctx.query);
    const { items, total } = await listDeliveries(ctx.state.em, ctx.state.principal.companyId, page, deliveryFilters(ctx.query));
    ctx.body = listBody(items.map((d) => deliveryJson(d)), total, page);
  });

  router.get('/webhook-deliveries/:id', manage, async (ctx) => {
    const delivery = await getDelivery(ctx.state.em, ctx.state.principal.companyId, recordId(ctx.params.id, 'Webhook delivery'));
    ctx.body = deliveryJson(delivery, await listAttempts(ctx.state.em, delivery));
  });

  router.get('/webhook-deliveries/:id/attempts', manage, async (ctx) => {
    const delivery = await getDelivery(ctx.state.em, ctx.state.principal.companyId, recordId(ctx.params.id, 'Webhook delivery'));
    const attempts = await listAttempts(ctx.state.em, delivery);
    ctx.body = { data: attempts.map(attemptJson) };
  });

  /** Re-runs a failed delivery (or brings a retrying one's next attempt forward), keeping its X-Webhook-ID. */
  router.post('/webhook-deliveries/:id/retry', manage, async (ctx) => {
    const body = validator.validate<{ reason?: string }>('rest/webhook-delivery.retry.json', ctx.request.body ?? {});
    const delivery = await rerunDelivery(ctx.state.em, temporal, config, ctx.state.principal.companyId, recordId(ctx.params.id, 'Webhook delivery'), body.reason);
    ctx.status = 202;
    ctx.body = deliveryJson(delivery);
  });

  router.get('/webhook-alerts', manage, async (ctx) => {
    const page = parsePage(ctx.query);
    const { items, total } = await listAlerts(ctx.state.em, ctx.state.principal.companyId, page);
    ctx.body = listBody(items.map(alertJson), total, page);
  });

  return router;
}
