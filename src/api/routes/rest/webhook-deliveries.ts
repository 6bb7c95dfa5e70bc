import { WEBHOOKS_MANAGE_SCOPE } from '../../../domain/accounts/scopes';
import { idOf, type View } from '../../../domain/page';
import type { DeliveryAttempt } from '../../../domain/webhooks/delivery-attempt.entity';
import { getDelivery, listAlerts, listAttempts, listDeliveries, rerunDelivery } from '../../../domain/webhooks/deliveries-service';
import type { WebhookAlert } from '../../../domain/webhooks/webhook-alert.entity';
import { DELIVERY_STATUSES, type DeliveryStatus, type WebhookDelivery } from '../../../domain/webhooks/webhook-delivery.entity';
import { ApiError } from '../../../errors';
import { iso } from '../../../events/payloads/format';
import type { DeliveryAttempt as AttemptRecord, WebhookAlert as AlertRecord, WebhookDelivery as DeliveryRecord, WebhookDeliveryRetry } from '../../../generated/schemas';
import type { AppDeps } from '../../context';
import { listBody, PAGE_PARAMS, pageOf } from '../../pagination';
import { byId, byValue } from '../../resources/filters';
import type { RouteSpec } from '../route-spec';

const SCHEMA = 'rest/webhook-deliveries.json#/$defs';

export function attemptJson(attempt: DeliveryAttempt): AttemptRecord {
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
export function deliveryJson(delivery: View<WebhookDelivery>, attempts?: DeliveryAttempt[]): DeliveryRecord {
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
    payload: JSON.parse(delivery.payload) as Record<string, unknown>,
    ...(attempts ? { attempts: attempts.map(attemptJson) } : {}),
  };
}

function alertJson(alert: View<WebhookAlert>): AlertRecord {
  return {
    id: alert.id,
    delivery_id: idOf(alert.delivery),
    endpoint_id: idOf(alert.endpoint),
    attempt_count: alert.attemptCount,
    message: alert.message,
    created_at: alert.createdAt.toISOString(),
  };
}

const endpointFilter = byId('endpoint_id', 'endpoint', 'Deliveries to this endpoint.');
const statusFilter = byValue('status', 'status', DELIVERY_STATUSES, 'Deliveries in this status.');
const eventTypeParam = {
  name: 'event_type',
  description: 'Deliveries of this event type (as sent in X-Webhook-Event).',
  schema: { type: 'string', minLength: 1, maxLength: 100 },
  parse(raw: string) {
    if (raw.length < 1 || raw.length > 100) throw ApiError.invalid('event_type', 'must be 1 to 100 characters');
    return raw;
  },
};

/** Delivery logs, re-runs and alerts of outbound webhooks (scope webhooks:manage). */
export function webhookDeliveryRoutes({ temporal, config }: AppDeps): RouteSpec[] {
  const common = { tag: 'webhook-deliveries', scope: WEBHOOKS_MANAGE_SCOPE, record: 'Webhook delivery' };
  return [
    {
      ...common,
      method: 'GET',
      path: '/webhook-deliveries',
      summary: 'List deliveries',
      description: 'The delivery log, newest first.',
      query: [...PAGE_PARAMS, endpointFilter.param, statusFilter.param, eventTypeParam],
      responses: { 200: { description: 'A page of deliveries', listOf: `${SCHEMA}/record` } },
      async handler(ctx) {
        const { query } = ctx.state;
        const page = pageOf(query);
        const filters = {
          endpointId: query.endpoint_id as string | undefined,
          status: query.status as DeliveryStatus | undefined,
          eventType: query.event_type as string | undefined,
        };
        const { items, total } = await listDeliveries(ctx.state.em, ctx.state.principal.companyId, page, filters);
        ctx.body = listBody(items.map((d) => deliveryJson(d)), total, page);
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/webhook-deliveries/{id}',
      summary: 'Get a delivery with its attempts',
      responses: { 200: { description: 'The delivery', schema: `${SCHEMA}/record` } },
      async handler(ctx) {
        const delivery = await getDelivery(ctx.state.em, ctx.state.principal.companyId, ctx.params.id!);
        ctx.body = deliveryJson(delivery, await listAttempts(ctx.state.em, delivery));
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/webhook-deliveries/{id}/attempts',
      summary: "List a delivery's attempts",
      responses: { 200: { description: 'Every attempt, first to last', dataOf: `${SCHEMA}/attempt` } },
      async handler(ctx) {
        const delivery = await getDelivery(ctx.state.em, ctx.state.principal.companyId, ctx.params.id!);
        ctx.body = { data: (await listAttempts(ctx.state.em, delivery)).map(attemptJson) };
      },
    },
    {
      ...common,
      method: 'POST',
      path: '/webhook-deliveries/{id}/retry',
      summary: 'Re-run a delivery',
      description: "Re-runs a failed delivery (or brings a retrying one's next attempt forward), keeping its X-Webhook-ID.",
      body: { schema: `${SCHEMA}/retry`, optional: true },
      responses: { 202: { description: 'The re-run is under way', schema: `${SCHEMA}/record` } },
      async handler(ctx) {
        const { reason } = ctx.request.body as WebhookDeliveryRetry;
        const delivery = await rerunDelivery(ctx.state.em, temporal, config, ctx.state.principal.companyId, ctx.params.id!, reason);
        ctx.status = 202;
        ctx.body = deliveryJson(delivery);
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/webhook-alerts',
      tag: 'webhook-deliveries',
      summary: 'List alerts',
      description: 'Deliveries that used up their attempts, newest first.',
      query: [...PAGE_PARAMS],
      responses: { 200: { description: 'A page of alerts', listOf: `${SCHEMA}/alert` } },
      async handler(ctx) {
        const page = pageOf(ctx.state.query);
        const { items, total } = await listAlerts(ctx.state.em, ctx.state.principal.companyId, page);
        ctx.body = listBody(items.map(alertJson), total, page);
      },
    },
  ];
}
