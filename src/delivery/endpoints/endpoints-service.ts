import type { EntityManager } from '@mikro-orm/postgresql';
import { randomBytes } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { SecretBox } from '../../crypto/secret-box';
import { ApiError } from '../../errors';
import type { Logger } from '../../logger';
import type { EndpointFilter, EndpointTransformation, WebhookEndpointAuthenticationInput, WebhookEndpointTransformationTestResult } from '../../generated/schemas';
import type { TransformationLimits } from '../../config';
import { SUBSCRIBABLE_NAMES } from '../../events/registry';
import { assertSafeTarget, authenticationFrom, NO_AUTHENTICATION } from './endpoint-authentication';
import type { TargetPolicy } from './ssrf-guard';
import type { Actor } from '../../domain/accounts/actor';
import { ApiKey } from '../../domain/accounts/api-key.entity';
import { findPage, type Page } from '../../domain/page';
import type { DeliveryWorkflows } from '../delivery-workflows';
import { type AdmissionSettings, allHeld, closeCircuit, wakeHeld } from './endpoint-admission';
import { deliveryEnvelope, type PayloadShape } from '../delivery-body';
import { checkFilter, compileFilter } from './endpoint-filter';
import { checkTransformation, CompiledTransformation, type Transformation, TransformationError, urlWithPath } from './endpoint-transformation';
import { normaliseSubscriptions } from './subscriptions';
import { type DeliveryKind, type EndpointOrdering, type EndpointStatus, WebhookEndpoint } from './webhook-endpoint.entity';

export interface EndpointFields {
  delivery: DeliveryKind;
  /** A webhook endpoint's; null for a feed. */
  url: string | null;
  eventTypes: string[];
  payloadShape: PayloadShape;
  /** One record's deliveries one at a time, in commit order (per_record), or each on its own (none). */
  ordering: EndpointOrdering;
  description: string | null;
  /** The key whose own changes this endpoint is not sent; null for none. */
  apiKeyId: string | null;
  status: EndpointStatus;
  /** Attempts per second to this endpoint at most; null for no limit. */
  maxAttemptsPerSecond: number | null;
  /** Headers, OAuth 2.0, client certificate (endpoint-authentication.ts); null removes them all. */
  authentication: WebhookEndpointAuthenticationInput | null;
  /** Conditions on the body (endpoint-filter.ts); null for none. */
  filter: EndpointFilter;
  /** The body, headers and path it is sent instead of the event's envelope (endpoint-transformation.ts); null for none. */
  transformation: EndpointTransformation;
}

/**
 * The URL of a webhook endpoint (one its delivery is to go to). A feed has none: its events are written to it by the
 * dispatcher, never as deliveries, and test deliveries and recoveries refuse it.
 */
export function webhookUrlOf(endpoint: Pick<WebhookEndpoint, 'id' | 'url'>): string {
  if (endpoint.url === null) throw new Error(`endpoint ${endpoint.id} is a feed: it has no URL to deliver to`);
  return endpoint.url;
}

/** A 400 for a feed asked for what only a webhook endpoint has (a test delivery, a recovery); `why` says what it lacks. */
export function assertWebhook(endpoint: Pick<WebhookEndpoint, 'delivery'>, why: string): void {
  if (endpoint.delivery === 'feed') throw ApiError.invalid('id', `is a feed: ${why} (its events are read with GET /webhook-endpoints/{id}/feed)`);
}

/** A URL for a webhook endpoint, none for a feed: a 400 naming url otherwise. */
function checkUrlFor(delivery: DeliveryKind, url: string | null | undefined): void {
  if (delivery === 'webhook' && !url) throw ApiError.invalid('url', 'is required for a webhook endpoint ("delivery": "webhook", the default)');
  if (delivery === 'feed' && url) throw ApiError.invalid('url', 'must be left out of a feed ("delivery": "feed"): its events are read by cursor, not sent');
}

/** Why a feed takes no ordering per record: it keeps all its events in one order already. */
const FEED_ORDERING = 'applies to webhook endpoints only: a feed keeps all its events in commit order, read one after another';

const newSecret = () => `whsec_${randomBytes(32).toString('base64url')}`;

async function checkApiKey(em: EntityManager, companyId: string, apiKeyId: string | null): Promise<void> {
  if (apiKeyId && (await em.count(ApiKey, { id: apiKeyId, company: companyId })) === 0) {
    throw ApiError.invalid('api_key_id', 'does not match an API key of your company');
  }
}

/**
 * Registers an endpoint and issues its signing secret, which is returned here and never again (a feed gets one too, and
 * keeps it should it be read by a signed relay; nothing is signed with it today).
 */
export async function registerEndpoint(
  em: EntityManager,
  secretBox: SecretBox,
  policy: TargetPolicy,
  actor: Actor,
  input: Omit<EndpointFields, 'delivery' | 'url' | 'apiKeyId' | 'status' | 'maxAttemptsPerSecond' | 'authentication' | 'ordering' | 'filter' | 'transformation'> & {
    delivery?: DeliveryKind;
    url?: string | null;
    ordering?: EndpointOrdering;
    apiKeyId?: string | null;
    maxAttemptsPerSecond?: number | null;
    authentication?: WebhookEndpointAuthenticationInput;
    filter?: EndpointFilter;
    transformation?: EndpointTransformation;
  },
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const eventTypes = normaliseSubscriptions(input.eventTypes);
  if (input.filter) checkFilter(input.filter);
  const delivery = input.delivery ?? 'webhook';
  if (input.transformation) checkTransformation(input.transformation, delivery);
  checkUrlFor(delivery, input.url);
  if (input.url) await assertSafeTarget('url', input.url, policy);
  if (delivery === 'feed' && (input.authentication || input.maxAttemptsPerSecond)) {
    throw ApiError.invalid(input.authentication ? 'authentication' : 'max_attempts_per_second', 'applies to webhook endpoints only: a feed is read, not sent to');
  }
  if (delivery === 'feed' && input.ordering === 'per_record') throw ApiError.invalid('ordering', FEED_ORDERING);
  const apiKeyId = input.apiKeyId === undefined ? actor.apiKeyId : input.apiKeyId;
  await checkApiKey(em, actor.companyId, apiKeyId);
  const authentication = input.authentication ? await authenticationFrom(input.authentication, NO_AUTHENTICATION, secretBox, policy) : NO_AUTHENTICATION;
  const secret = newSecret();
  const endpoint = em.create(WebhookEndpoint, {
    company: actor.companyId,
    apiKey: apiKeyId,
    delivery,
    url: input.url ?? null,
    description: input.description,
    eventTypes,
    payloadShape: input.payloadShape,
    ordering: input.ordering ?? 'none',
    maxAttemptsPerSecond: input.maxAttemptsPerSecond ?? null,
    filter: input.filter ?? null,
    transformation: input.transformation ?? null,
    ...authentication,
    secretSealed: secretBox.seal(secret),
  });
  await em.flush();
  return { endpoint, secret };
}

export async function listEndpoints(em: EntityManager, companyId: string, page: Page) {
  return findPage(em, WebhookEndpoint, { company: companyId, status: { $ne: 'deleted' } }, { createdAt: 'asc', id: 'asc' }, page);
}

export async function getEndpoint(em: EntityManager, companyId: string, id: string): Promise<WebhookEndpoint> {
  const endpoint = await em.findOne(WebhookEndpoint, { id, company: companyId, status: { $ne: 'deleted' } });
  if (!endpoint) throw ApiError.notFound('Webhook endpoint');
  return endpoint;
}

/**
 * Ends what waits for an endpoint no longer active (deleted, or disabled by hand, by a 410 or for failing too long): its
 * deferred deliveries are cancelled, and the runs it holds or that wait for their next retry make their attempt now,
 * which fails at once without sending.
 */
export async function releaseWaiting(em: EntityManager, deliveryWorkflows: DeliveryWorkflows, endpointId: string): Promise<void> {
  await cancelDeferred(em, endpointId);
  await wakeHeld(em, deliveryWorkflows, endpointId, await allHeld(em, endpointId));
  const retrying = await em.execute<{ id: string }[]>(`select id from webhook_deliveries where endpoint_id = ? and status = 'retrying' and held_until is null`, [endpointId]);
  await deliveryWorkflows.endpointEnded(retrying.map((row) => row.id));
}

/** Cancels the deliveries of an endpoint no longer active that wait without a run, saying why (cancel_deferred_deliveries). */
async function cancelDeferred(em: EntityManager, endpointId: string): Promise<void> {
  await em.execute('select cancel_deferred_deliveries(?)', [endpointId]);
}

/** Changes only the fields given; a new URL (or token URL) is checked like a registration. */
export async function updateEndpoint(
  em: EntityManager,
  deliveryWorkflows: DeliveryWorkflows,
  secretBox: SecretBox,
  policy: TargetPolicy,
  companyId: string,
  id: string,
  patch: Partial<EndpointFields>,
): Promise<WebhookEndpoint> {
  const endpoint = await getEndpoint(em, companyId, id);
  if (endpoint.delivery === 'feed' && (patch.url || patch.authentication || patch.maxAttemptsPerSecond)) {
    const field = patch.url ? 'url' : patch.authentication ? 'authentication' : 'max_attempts_per_second';
    throw ApiError.invalid(field, 'applies to webhook endpoints only: a feed is read, not sent to');
  }
  if (endpoint.delivery === 'feed' && patch.ordering === 'per_record') throw ApiError.invalid('ordering', FEED_ORDERING);
  if (patch.url) await assertSafeTarget('url', patch.url, policy);
  if (patch.apiKeyId !== undefined) await checkApiKey(em, companyId, patch.apiKeyId);
  if (patch.authentication !== undefined) Object.assign(endpoint, await authenticationFrom(patch.authentication, endpoint, secretBox, policy));
  if (patch.eventTypes !== undefined) endpoint.eventTypes = normaliseSubscriptions(patch.eventTypes);
  if (patch.filter) checkFilter(patch.filter);
  if (patch.filter !== undefined) endpoint.filter = patch.filter;
  if (patch.transformation) checkTransformation(patch.transformation, endpoint.delivery);
  if (patch.transformation !== undefined) endpoint.transformation = patch.transformation;
  if (patch.url) endpoint.url = patch.url;
  if (patch.payloadShape !== undefined) endpoint.payloadShape = patch.payloadShape;
  // Ordered no more: what waits for its record's earlier delivery goes now. Ordered from now on: the deliveries not
  // attempted yet wait for their records' earlier ones as they ask (admit_delivery_attempt).
  const unordered = patch.ordering === 'none' && endpoint.ordering === 'per_record';
  if (patch.ordering !== undefined) endpoint.ordering = patch.ordering;
  if (patch.description !== undefined) endpoint.description = patch.description;
  if (patch.status !== undefined && patch.status !== endpoint.status) {
    endpoint.status = patch.status;
    // Re-enabled: the reason and the failing streak go, and so do the alerts about it; its breaker starts closed.
    Object.assign(
      endpoint,
      patch.status === 'active'
        ? { disabledReason: null, disabledAt: null, failingSince: null, circuitState: 'closed', circuitFailingDeliveries: [], circuitFailedProbes: 0, circuitOpenedAt: null, circuitProbeAt: null, circuitProbeDeliveryId: null }
        : { disabledReason: 'disabled through the API', disabledAt: new Date() },
    );
    if (patch.status === 'active') {
      await em.execute(`update webhook_alerts set resolved_at = now() where endpoint_id = ? and kind = 'endpoint_disabled' and resolved_at is null`, [endpoint.id]);
    }
  }
  if (patch.maxAttemptsPerSecond !== undefined) endpoint.maxAttemptsPerSecond = patch.maxAttemptsPerSecond;
  if (patch.apiKeyId !== undefined) endpoint.apiKey = patch.apiKeyId ? em.getReference(ApiKey, patch.apiKeyId, { wrapped: true }) : null;
  await em.flush();
  if (endpoint.status !== 'active') await releaseWaiting(em, deliveryWorkflows, endpoint.id);
  else if (unordered) await wakeHeld(em, deliveryWorkflows, endpoint.id, await allHeld(em, endpoint.id, 'awaiting_predecessor'));
  return endpoint;
}

/**
 * Disables an active endpoint and raises an alert saying why (a 410 Gone, or failing everything for too long);
 * false when it was not active. Runs in the caller's transaction.
 */
export async function disableEndpoint(em: EntityManager, logger: Logger, endpointId: string, reason: string): Promise<boolean> {
  const [endpoint] = await em.execute<{ company_id: string; url: string }[]>(
    `update webhook_endpoints set status = 'disabled', disabled_reason = ?, disabled_at = now(), updated_at = now()
      where id = ? and status = 'active' returning company_id, url`,
    [reason, endpointId],
  );
  if (!endpoint) return false;
  const message = `Endpoint ${endpoint.url} was disabled: ${reason}. Re-enable it with PUT /api/v1/webhook-endpoints/${endpointId} {"status": "active"}.`;
  await em.execute(
    `insert into webhook_alerts (id, company_id, created_at, updated_at, kind, endpoint_id, attempt_count, message)
     values (?, ?, now(), now(), 'endpoint_disabled', ?, 0, ?)`,
    [uuidv7(), endpoint.company_id, endpointId, message],
  );
  logger.warn({ endpointId, companyId: endpoint.company_id, alert: 'webhook_endpoint_disabled' }, message);
  return true;
}

/**
 * Deletes the endpoint for the API: it gets no new deliveries, and what waits for it ends at once (releaseWaiting).
 * The row stays (status `deleted`) so its delivery log does too.
 */
export async function deleteEndpoint(em: EntityManager, deliveryWorkflows: DeliveryWorkflows, companyId: string, id: string): Promise<void> {
  const endpoint = await getEndpoint(em, companyId, id);
  endpoint.status = 'deleted';
  await em.flush();
  await releaseWaiting(em, deliveryWorkflows, endpoint.id);
}

/**
 * Closes the endpoint's circuit breaker by hand and wakes the deliveries it held, oldest first, as many as may be in
 * flight. Returns the endpoint as it is now.
 */
export async function closeEndpointCircuit(em: EntityManager, deliveryWorkflows: DeliveryWorkflows, settings: AdmissionSettings, companyId: string, id: string): Promise<WebhookEndpoint> {
  const endpoint = await getEndpoint(em, companyId, id);
  const held = await closeCircuit(em, settings, endpoint.id);
  await wakeHeld(em, deliveryWorkflows, endpoint.id, held);
  await em.refresh(endpoint);
  return endpoint;
}

/** What a filter test is asked: a body, or the company's most recent event of a type; a filter to try, else the endpoint's. */
export interface FilterTestInput {
  event?: Record<string, unknown>;
  eventType?: string;
  filter?: EndpointFilter;
}

/**
 * Whether the endpoint would be sent an event, by its filter (or the one given, checked like a registration's): a body
 * given as it would be sent, or the company's most recent event of a type in the endpoint's shape.
 */
export async function testEndpointFilter(em: EntityManager, companyId: string, id: string, input: FilterTestInput) {
  const endpoint = await getEndpoint(em, companyId, id);
  if ((input.event === undefined) === (input.eventType === undefined)) throw ApiError.invalid('event', 'give either event (a body) or event_type');
  if (input.filter) checkFilter(input.filter);
  const filter = input.filter === undefined ? endpoint.filter : input.filter;
  const event = input.event ?? (await latestEventBody(em, endpoint, input.eventType!));
  return { matches: filter ? compileFilter(filter)(event) : true, filter, event };
}

/** What a transformation test is asked: a body, or the company's most recent event of a type; a transformation to try, else the endpoint's. */
export interface TransformationTestInput {
  event?: Record<string, unknown>;
  eventType?: string;
  transformation?: EndpointTransformation;
}

/**
 * What the endpoint would be sent for an event, by its transformation (or the one given, checked like a registration's):
 * a body given as it would be sent, or the company's most recent event of a type in the endpoint's shape. An evaluation
 * that fails answers why (`error`), as the delivery would fail.
 */
export async function testEndpointTransformation(
  em: EntityManager,
  limits: TransformationLimits,
  companyId: string,
  id: string,
  input: TransformationTestInput,
): Promise<WebhookEndpointTransformationTestResult> {
  const endpoint = await getEndpoint(em, companyId, id);
  if ((input.event === undefined) === (input.eventType === undefined)) throw ApiError.invalid('event', 'give either event (a body) or event_type');
  if (input.transformation) checkTransformation(input.transformation, endpoint.delivery);
  const transformation: Transformation | null = input.transformation === undefined ? endpoint.transformation : input.transformation;
  const event = input.event ?? (await latestEventBody(em, endpoint, input.eventType!));
  if (!transformation) return { body: event, headers: {}, url: endpoint.url, error: null, event };
  try {
    const request = await new CompiledTransformation(transformation, limits).run(event, endpoint.url);
    const url = endpoint.url === null ? null : urlWithPath(endpoint.url, request.path);
    return { body: JSON.parse(request.payload) as WebhookEndpointTransformationTestResult['body'], headers: request.headers, url, error: null, event };
  } catch (error) {
    if (!(error instanceof TransformationError)) throw error;
    return { body: null, headers: {}, url: null, error: { field: error.field, message: error.reason, position: error.position }, event };
  }
}

/** The body the endpoint would have been sent for its company's most recent event of a type (a name of either shape). */
async function latestEventBody(em: EntityManager, endpoint: WebhookEndpoint, eventType: string): Promise<Record<string, unknown>> {
  const definition = SUBSCRIBABLE_NAMES.get(eventType);
  if (!definition) throw ApiError.invalid('event_type', `"${eventType}" is not an event type`);
  const [row] = await em.execute<{ id: string; created_at: Date; data: Record<string, unknown> | null; catalog_data: Record<string, unknown> | null }[]>(
    'select id, created_at, data, catalog_data from outbox_events where company_id = ? and event_type = ? order by created_at desc, id desc limit 1',
    [endpoint.company.id, definition.key],
  );
  if (!row) throw new ApiError('NOT_FOUND', `Your company has no ${eventType} event yet`, { field: 'event_type', reason: 'no such event yet' });
  const stored = { id: row.id, companyId: endpoint.company.id, eventType: definition.key, occurredAt: new Date(row.created_at), data: row.data, catalogData: row.catalog_data };
  return deliveryEnvelope(stored, endpoint.payloadShape).body;
}

/**
 * Issues a new signing secret. Deliveries are signed with it from now on, and for `overlapMs` also with the one
 * it replaces (X-Webhook-Signatures), so the subscriber can switch without losing deliveries.
 */
export async function rotateEndpointSecret(em: EntityManager, secretBox: SecretBox, companyId: string, id: string, overlapMs: number) {
  const endpoint = await getEndpoint(em, companyId, id);
  const secret = newSecret();
  Object.assign(endpoint, {
    previousSecretSealed: overlapMs > 0 ? endpoint.secretSealed : null,
    previousSecretExpiresAt: overlapMs > 0 ? new Date(Date.now() + overlapMs) : null,
    secretSealed: secretBox.seal(secret),
  });
  await em.flush();
  return { endpoint, secret };
}
