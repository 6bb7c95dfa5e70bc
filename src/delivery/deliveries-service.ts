import type { FilterQuery, ObjectQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { setTimeout as delay } from 'node:timers/promises';
import { v7 as uuidv7 } from 'uuid';
import type { Config } from '../config';
import { ApiError } from '../errors';
import { testDeliveryBody } from './delivery-body';
import { type Cursor, cursorAfter, findPage, type Page } from '../domain/page';
import { type TraceContext, traceContextOf } from '../observability/trace-context';
import { type DeliveryToStart, type DeliveryWorkflows, RerunRefused } from './delivery-workflows';
import { DeliveryAttempt } from './delivery-attempt.entity';
import { assertWebhook, getEndpoint, webhookUrlOf } from './endpoints/endpoints-service';
import { WebhookAlert } from './webhook-alert.entity';
import { WebhookDelivery } from './webhook-delivery.entity';
import { WebhookRecovery } from './webhook-recovery.entity';
import type { DeliveryStatus } from '../../workflows/webhook-delivery.contract';

/** What a re-run can start from: a delivery that failed, was cancelled, or is waiting for its next retry. */
export const RERUNNABLE_STATUSES = ['failed', 'retrying', 'cancelled'] as const satisfies DeliveryStatus[];

/** Attempts by the class of the status code they got; `none` is no response (connection error, timeout). */
export const STATUS_CODE_CLASSES = ['2xx', '3xx', '4xx', '5xx', 'none'] as const;
export type StatusCodeClass = (typeof STATUS_CODE_CLASSES)[number];

export interface DeliveryFilters {
  endpointId?: string;
  status?: DeliveryStatus;
  eventType?: string;
  /** Deliveries made at or after this instant. */
  createdFrom?: Date;
  /** Deliveries made before this instant. */
  createdBefore?: Date;
}

/** The delivery log's order: newest first. */
const DELIVERY_LOG_ORDER = { createdAt: 'desc', id: 'desc' } as const;

/** The trace the delivery was made in; null when untraced. */
export function deliveryTrace(delivery: Pick<WebhookDelivery, 'traceparent' | 'tracestate'>): TraceContext | null {
  return delivery.traceparent ? { traceparent: delivery.traceparent, tracestate: delivery.tracestate } : null;
}

/** What the delivery's workflow is started with. */
export function deliveryToStart(delivery: WebhookDelivery): DeliveryToStart {
  const endpoint = delivery.endpoint.getEntity();
  return {
    input: { deliveryId: delivery.id, companyId: delivery.company.id, endpointId: endpoint.id, eventType: delivery.eventType },
    endpointUrl: webhookUrlOf(endpoint),
    eventId: delivery.event?.id ?? null,
    trace: deliveryTrace(delivery),
  };
}

/**
 * The cursor of the delivery log that continues after this delivery: what `after=<delivery id>`, the form the
 * log took before every list had cursors, means. A 400 when it is not a delivery of the company.
 */
export async function deliveryLogCursor(em: EntityManager, companyId: string, deliveryId: string): Promise<Cursor> {
  const cursor = await cursorAfter(em, WebhookDelivery, DELIVERY_LOG_ORDER, { id: deliveryId, company: companyId });
  if (!cursor) throw ApiError.invalid('after', 'does not name a delivery of your company');
  return cursor;
}

/** Delivery log of a company, newest first; after a cursor, the page that follows it. */
export async function listDeliveries(em: EntityManager, companyId: string, page: Page, filters: DeliveryFilters) {
  const createdAt = {
    ...(filters.createdFrom ? { $gte: filters.createdFrom } : {}),
    ...(filters.createdBefore ? { $lt: filters.createdBefore } : {}),
  };
  const where: ObjectQuery<WebhookDelivery> = {
    company: companyId,
    ...(filters.endpointId ? { endpoint: filters.endpointId } : {}),
    ...(filters.status ? { status: filters.status } : {}),
    ...(filters.eventType ? { eventType: filters.eventType } : {}),
    ...(Object.keys(createdAt).length > 0 ? { createdAt } : {}),
  };
  return findPage(em, WebhookDelivery, where, DELIVERY_LOG_ORDER, page);
}

export async function getDelivery(em: EntityManager, companyId: string, id: string): Promise<WebhookDelivery> {
  const delivery = await em.findOne(WebhookDelivery, { id, company: companyId });
  if (!delivery) throw ApiError.notFound('Webhook delivery');
  return delivery;
}

function statusCodeClassWhere(statusCodeClass: StatusCodeClass | undefined): ObjectQuery<DeliveryAttempt> {
  if (!statusCodeClass) return {};
  if (statusCodeClass === 'none') return { statusCode: null, outcome: { $ne: 'in_progress' } };
  const from = Number(statusCodeClass[0]) * 100;
  return { statusCode: { $gte: from, $lt: from + 100 } };
}

export async function listAttempts(em: EntityManager, delivery: WebhookDelivery, statusCodeClass?: StatusCodeClass): Promise<DeliveryAttempt[]> {
  return em.find(DeliveryAttempt, { delivery, ...statusCodeClassWhere(statusCodeClass) }, { orderBy: { attemptNumber: 'asc' } });
}

/** An endpoint's attempts across its deliveries, newest first (Svix's attempt log). */
export async function listEndpointAttempts(em: EntityManager, companyId: string, endpointId: string, page: Page, statusCodeClass?: StatusCodeClass) {
  const endpoint = await getEndpoint(em, companyId, endpointId);
  return findPage(em, DeliveryAttempt, { company: companyId, delivery: { endpoint }, ...statusCodeClassWhere(statusCodeClass) }, { createdAt: 'desc', id: 'desc' }, page);
}

/** Alerts, newest first: open ones (not resolved yet), resolved ones, or all. */
export async function listAlerts(em: EntityManager, companyId: string, page: Page, state?: 'open' | 'resolved') {
  const where: FilterQuery<WebhookAlert> = { company: companyId, ...(state ? { resolvedAt: state === 'open' ? null : { $ne: null } } : {}) };
  return findPage(em, WebhookAlert, where, { createdAt: 'desc', id: 'desc' }, page);
}

/** Waits until the delivery has a finished attempt numbered `attemptNumber` or later; false when `ms` passed first. */
async function attemptFinished(em: EntityManager, deliveryId: string, attemptNumber: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  do {
    const finished = await em.count(DeliveryAttempt, { delivery: deliveryId, attemptNumber: { $gte: attemptNumber }, outcome: { $ne: 'in_progress' } });
    if (finished > 0) return true;
    await delay(100);
  } while (Date.now() < deadline);
  return false;
}

/** How long a request waits for the attempt it asked for: the attempt's deadline, and time to record it. */
const attemptWaitMs = (config: Config) => config.webhooks.timeoutMs + 5000;

/** A delivery as it is after the attempt a request asked for; `finished` is false when that attempt was still going. */
export interface DeliveryOnceAttempted {
  delivery: WebhookDelivery;
  finished: boolean;
}

/** Reads the delivery again once the wait for its attempt is over, so the answer shows that attempt. */
async function deliveryOnceAttempted(em: EntityManager, delivery: WebhookDelivery, finished: boolean): Promise<DeliveryOnceAttempted> {
  await em.refresh(delivery);
  return { delivery, finished };
}

/**
 * Re-runs a failed or cancelled delivery (or makes a retrying one's next attempt now) with the same X-Webhook-ID,
 * as the "rerun" update does from the Temporal UI, and waits for that attempt up to the attempt deadline. Returns
 * the delivery as it is then; `finished` is false when the attempt was still going.
 */
export async function rerunDelivery(
  em: EntityManager,
  deliveryWorkflows: DeliveryWorkflows,
  config: Config,
  companyId: string,
  id: string,
  reason: string | undefined,
): Promise<DeliveryOnceAttempted> {
  const delivery = await em.findOne(WebhookDelivery, { id, company: companyId }, { populate: ['endpoint'] });
  if (!delivery) throw ApiError.notFound('Webhook delivery');
  if (!(RERUNNABLE_STATUSES as readonly string[]).includes(delivery.status)) {
    throw new ApiError('CONFLICT', `Only ${RERUNNABLE_STATUSES.join(', ')} deliveries can be re-run; this one is ${delivery.status}`, {
      field: 'status',
      reason: `is ${delivery.status}`,
    });
  }
  const [last] = await em.find(DeliveryAttempt, { delivery }, { orderBy: { attemptNumber: 'desc' }, limit: 1 });
  const waitMs = attemptWaitMs(config);
  let requested;
  try {
    requested = await deliveryWorkflows.requestRerun(deliveryToStart(delivery), { reason }, waitMs);
  } catch (error) {
    if (!(error instanceof RerunRefused)) throw error;
    const refusal = error.message;
    throw new ApiError('CONFLICT', `The delivery cannot be re-run right now: ${refusal}`, { field: null, reason: refusal });
  }
  return deliveryOnceAttempted(
    em,
    delivery,
    requested.via === 'update' ? requested.result !== null : await attemptFinished(em, delivery.id, last ? last.attemptNumber + 1 : 0, waitMs),
  );
}

/**
 * Sends a webhook.test delivery to the endpoint: one attempt, recorded like any other delivery. Waits for
 * it up to the attempt deadline; `finished` is false when it is still going.
 */
export async function sendTestDelivery(
  em: EntityManager,
  deliveryWorkflows: DeliveryWorkflows,
  config: Config,
  companyId: string,
  endpointId: string,
): Promise<DeliveryOnceAttempted> {
  const endpoint = await getEndpoint(em, companyId, endpointId);
  assertWebhook(endpoint, 'it gets no test deliveries');
  const id = uuidv7();
  const body = testDeliveryBody({ deliveryId: id, companyId, endpointId, shape: endpoint.payloadShape });
  // In the trace of the request that asks for it.
  const trace = traceContextOf();
  const delivery = em.create(WebhookDelivery, {
    id,
    company: companyId,
    endpoint,
    eventType: body.eventType,
    payload: body.payload,
    isTest: true,
    traceparent: trace?.traceparent ?? null,
    tracestate: trace?.tracestate ?? null,
  });
  await em.flush();
  await deliveryWorkflows.start({
    input: { deliveryId: id, companyId, endpointId, eventType: body.eventType },
    endpointUrl: webhookUrlOf(endpoint),
    eventId: null,
    trace,
  });
  // A test send that failed ends its run as failed: the attempt is recorded all the same.
  return deliveryOnceAttempted(em, delivery, await deliveryWorkflows.closedWithin(id, attemptWaitMs(config)));
}

/**
 * POST /webhook-endpoints/{id}/recover: takes every failed or cancelled delivery of the endpoint made since
 * `since` and starts the workflow that re-runs them. The endpoint must be active (a disabled one would fail them
 * again at once).
 */
export async function startRecovery(
  em: EntityManager,
  deliveryWorkflows: DeliveryWorkflows,
  companyId: string,
  endpointId: string,
  since: Date,
): Promise<WebhookRecovery> {
  const endpoint = await getEndpoint(em, companyId, endpointId);
  assertWebhook(endpoint, 'it has no deliveries to re-run');
  if (endpoint.status !== 'active') {
    throw new ApiError('CONFLICT', `The endpoint is ${endpoint.status}; re-enable it (PUT {"status": "active"}) before recovering its deliveries`, { field: 'status', reason: `is ${endpoint.status}` });
  }
  return em.transactional(async (tx) => {
    const rows = await tx.execute<{ id: string }[]>(
      `select id from webhook_deliveries where endpoint_id = ? and status in ('failed', 'cancelled') and not is_test and created_at >= ? order by created_at, id`,
      [endpoint.id, since],
    );
    const recovery = tx.create(WebhookRecovery, { company: companyId, endpoint, since, deliveryIds: rows.map((r) => r.id) });
    await tx.flush();
    // Started before the commit: a failure to start leaves no recovery behind; a commit that fails after it leaves a
    // run that finds no recovery and fails.
    await deliveryWorkflows.startRecovery({ recoveryId: recovery.id }, companyId, `Re-run ${rows.length} failed deliveries to ${endpoint.url} since ${since.toISOString()}`);
    return recovery;
  });
}

export interface RecoveryProgress {
  recovery: WebhookRecovery;
  /** The recovery's deliveries whose re-run attempt has finished since it began, or that were delivered meanwhile. */
  finished: number;
  /** The recovery's deliveries by their status now. */
  outcomes: Record<DeliveryStatus, number>;
}

/** How far a recovery is; `companyId` and `endpointId` keep it to its owner (the operator CLI gives none). */
export async function getRecovery(em: EntityManager, recoveryId: string, owner?: { companyId: string; endpointId: string }): Promise<RecoveryProgress> {
  const recovery = await em.findOne(WebhookRecovery, { id: recoveryId, ...(owner ? { company: owner.companyId, endpoint: owner.endpointId } : {}) });
  if (!recovery) throw ApiError.notFound('Recovery');
  const ids = `{${recovery.deliveryIds.join(',')}}`;
  const rows = await em.execute<{ status: DeliveryStatus; count: string; finished: string }[]>(
    `select d.status, count(*) as count,
            count(*) filter (where d.status = 'delivered' or exists (
              select 1 from webhook_delivery_attempts a where a.delivery_id = d.id and a.created_at >= ? and a.outcome <> 'in_progress')) as finished
       from webhook_deliveries d where d.id = any(?::uuid[]) group by d.status`,
    [recovery.createdAt, ids],
  );
  const outcomes = { pending: 0, retrying: 0, delivered: 0, failed: 0, cancelled: 0 };
  for (const row of rows) outcomes[row.status] = Number(row.count);
  return { recovery, finished: rows.reduce((sum, row) => sum + Number(row.finished), 0), outcomes };
}
