import { WEBHOOKS_MANAGE_SCOPE } from '../../../domain/accounts/scopes';
import { idOf, type View } from '../../../domain/page';
import type { DeliveryAttempt } from '../../../delivery/delivery-attempt.entity';
import {
  deliveryLogCursor,
  deliveryTrace,
  getDelivery,
  listAlerts,
  listAttempts,
  listDeliveries,
  type RecoveryProgress,
  rerunDelivery,
  STATUS_CODE_CLASSES,
  type StatusCodeClass,
} from '../../../delivery/deliveries-service';
import type { WebhookAlert } from '../../../delivery/webhook-alert.entity';
import { type WebhookDelivery, waitingReason } from '../../../delivery/webhook-delivery.entity';
import { ApiError } from '../../../errors';
import { isUuid } from '../../../schemas/formats';
import { iso } from '../../../domain/event-format';
import { traceIdOf } from '../../../observability/trace-context';
import type {
  DeliveryAttempt as AttemptRecord,
  WebhookAlert as AlertRecord,
  WebhookDelivery as DeliveryRecord,
  WebhookDeliveryRetry,
  WebhookRecovery as RecoveryRecord,
} from '../../../generated/schemas';
import type { AppDeps } from '../../context';
import { AFTER_PARAM, listBody, PAGE_PARAMS, pageOf } from '../../pagination';
import { byId, byValue } from '../../resources/filters';
import type { QueryParam, RouteSpec } from '../route-spec';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../../../../workflows/webhook-delivery.contract';

const SCHEMA = 'rest/webhook-deliveries.json#/$defs';

export function attemptJson(attempt: View<DeliveryAttempt>): AttemptRecord {
  return {
    delivery_id: idOf(attempt.delivery)!,
    attempt_number: attempt.attemptNumber,
    trigger: attempt.trigger,
    outcome: attempt.outcome,
    status_code: attempt.statusCode,
    duration_ms: attempt.durationMs,
    error: attempt.error,
    response_excerpt: attempt.responseExcerpt,
    started_at: attempt.createdAt.toISOString(),
    finished_at: iso(attempt.finishedAt),
    trace_id: attempt.traceId,
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
    held_reason: waitingReason(delivery),
    record_key: delivery.recordKey,
    delivered_at: iso(delivery.deliveredAt),
    failed_at: iso(delivery.failedAt),
    created_at: delivery.createdAt.toISOString(),
    payload: JSON.parse(delivery.payload) as Record<string, unknown>,
    request:
      delivery.transformedPayload === null
        ? null
        : { body: JSON.parse(delivery.transformedPayload) as Record<string, unknown>, headers: delivery.transformedHeaders ?? {}, path: delivery.transformedPath },
    trace_id: traceIdOf(deliveryTrace(delivery)),
    ...(attempts ? { attempts: attempts.map(attemptJson) } : {}),
  };
}

export function recoveryJson({ recovery, finished, outcomes }: RecoveryProgress): RecoveryRecord {
  return {
    id: recovery.id,
    endpoint_id: recovery.endpoint.id,
    since: recovery.since.toISOString(),
    status: recovery.status,
    total: recovery.deliveryIds.length,
    requested: recovery.requested,
    finished,
    outcomes,
    created_at: recovery.createdAt.toISOString(),
    completed_at: iso(recovery.completedAt),
  };
}

function alertJson(alert: View<WebhookAlert>): AlertRecord {
  return {
    id: alert.id,
    kind: alert.kind,
    delivery_id: idOf(alert.delivery),
    endpoint_id: idOf(alert.endpoint),
    attempt_count: alert.attemptCount,
    message: alert.message,
    created_at: alert.createdAt.toISOString(),
    resolved_at: iso(alert.resolvedAt),
  };
}

const endpointFilter = byId('endpoint_id', 'endpoint', 'Deliveries to this endpoint.');
const statusFilter = byValue('status', 'status', DELIVERY_STATUSES, 'Deliveries in this status.');
/** `?status_code_class=5xx`: attempts whose status code is in that class; `none` for no response. */
export const statusCodeClassParam = {
  name: 'status_code_class',
  description: 'Attempts whose status code is in this class: 2xx, 3xx, 4xx, 5xx, or none (no response: a connection error or a timeout).',
  schema: { enum: [...STATUS_CODE_CLASSES] },
  parse(raw: string): StatusCodeClass {
    if (!(STATUS_CODE_CLASSES as readonly string[]).includes(raw)) throw ApiError.invalid('status_code_class', `must be one of: ${STATUS_CODE_CLASSES.join(', ')}`);
    return raw as StatusCodeClass;
  },
};
/**
 * `after` of the delivery log: a cursor, as on every list, or a delivery's id, as the log took before every list
 * had cursors (pagination.next_after, kept for the clients of then).
 */
const deliveryAfterParam: QueryParam = {
  ...AFTER_PARAM,
  description: `${AFTER_PARAM.description} A delivery's id (the deprecated pagination.next_after) is still accepted: the deliveries after that one.`,
  parse: (raw) => (isUuid(raw) ? raw.toLowerCase() : AFTER_PARAM.parse(raw)),
};
const alertStateParam = {
  name: 'status',
  description: 'open: not resolved yet; resolved: the delivery was delivered or the endpoint re-enabled.',
  schema: { enum: ['open', 'resolved'] },
  parse(raw: string) {
    if (raw !== 'open' && raw !== 'resolved') throw ApiError.invalid('status', 'must be open or resolved');
    return raw;
  },
};
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
export function webhookDeliveryRoutes({ deliveryWorkflows, config }: AppDeps): RouteSpec[] {
  const common = { tag: 'webhook-deliveries', scope: WEBHOOKS_MANAGE_SCOPE, record: 'Webhook delivery' };
  return [
    {
      ...common,
      method: 'GET',
      path: '/webhook-deliveries',
      summary: 'List deliveries',
      description: 'The delivery log, newest first: by limit and offset, or by cursor (after = pagination.next_cursor of the previous page).',
      query: [...PAGE_PARAMS.map((p) => (p.name === 'after' ? deliveryAfterParam : p)), endpointFilter.param, statusFilter.param, eventTypeParam],
      responses: { 200: { description: 'A page of deliveries', listOf: `${SCHEMA}/record` } },
      async handler(ctx) {
        const { em, principal, query } = ctx.state;
        const after = typeof query.after === 'string' ? await deliveryLogCursor(em, principal.companyId, query.after) : query.after;
        const page = pageOf({ ...query, after });
        const filters = {
          endpointId: query.endpoint_id as string | undefined,
          status: query.status as DeliveryStatus | undefined,
          eventType: query.event_type as string | undefined,
        };
        const { items, total, next } = await listDeliveries(em, principal.companyId, page, filters);
        const body = listBody(items.map((d) => deliveryJson(d)), total, page, next);
        // The deprecated form of next_cursor: the last delivery's id, for after.
        ctx.body = { ...body, pagination: { ...body.pagination, next_after: next ? items.at(-1)!.id : null } };
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
      description: 'With the first 1 KiB of each response; status_code_class keeps those of one class.',
      query: [statusCodeClassParam],
      responses: { 200: { description: 'Every attempt, first to last', dataOf: `${SCHEMA}/attempt` } },
      async handler(ctx) {
        const delivery = await getDelivery(ctx.state.em, ctx.state.principal.companyId, ctx.params.id!);
        const statusCodeClass = ctx.state.query.status_code_class as StatusCodeClass | undefined;
        ctx.body = { data: (await listAttempts(ctx.state.em, delivery, statusCodeClass)).map(attemptJson) };
      },
    },
    {
      ...common,
      method: 'POST',
      path: '/webhook-deliveries/{id}/retry',
      summary: 'Re-run a delivery',
      description:
        "Re-runs a failed or cancelled delivery (or brings a retrying one's next attempt forward), keeping its X-Webhook-ID, " +
        'and answers once that attempt is made, with the delivery as it is then (202 when the attempt is still going after the attempt deadline).',
      body: { schema: `${SCHEMA}/retry`, optional: true },
      responses: {
        200: { description: 'The re-run attempt was made: the delivery and its attempts', schema: `${SCHEMA}/record` },
        202: { description: 'The re-run attempt is still going', schema: `${SCHEMA}/record` },
      },
      async handler(ctx) {
        const { reason } = ctx.request.body as WebhookDeliveryRetry;
        const { delivery, finished } = await rerunDelivery(ctx.state.em, deliveryWorkflows, config, ctx.state.principal.companyId, ctx.params.id!, reason);
        ctx.status = finished ? 200 : 202;
        ctx.body = deliveryJson(delivery, await listAttempts(ctx.state.em, delivery));
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/webhook-alerts',
      tag: 'webhook-deliveries',
      summary: 'List alerts',
      description: 'Deliveries that used up their attempts and endpoints that were disabled, newest first. An alert is resolved when its delivery is delivered or its endpoint re-enabled.',
      query: [...PAGE_PARAMS, alertStateParam],
      responses: { 200: { description: 'A page of alerts', listOf: `${SCHEMA}/alert` } },
      async handler(ctx) {
        const page = pageOf(ctx.state.query);
        const state = ctx.state.query.status as 'open' | 'resolved' | undefined;
        const { items, total, next } = await listAlerts(ctx.state.em, ctx.state.principal.companyId, page, state);
        ctx.body = listBody(items.map(alertJson), total, page, next);
      },
    },
  ];
}
