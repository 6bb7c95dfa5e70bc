import { actorOf } from '../../../domain/accounts/actor';
import { WEBHOOKS_MANAGE_SCOPE } from '../../../domain/accounts/scopes';
import { idOf, type View } from '../../../domain/page';
import {
  getRecovery,
  listAttempts,
  listEndpointAttempts,
  sendTestDelivery,
  startRecovery,
  type StatusCodeClass,
} from '../../../delivery/deliveries-service';
import {
  closeEndpointCircuit,
  deleteEndpoint,
  getEndpoint,
  listEndpoints,
  registerEndpoint,
  rotateEndpointSecret,
  testEndpointFilter,
  testEndpointTransformation,
  updateEndpoint,
} from '../../../delivery/endpoints/endpoints-service';
import { authenticationJson } from '../../../delivery/endpoints/endpoint-authentication';
import { acknowledgeFeed, feedCursor, feedStates, type FeedState, getFeed, positionOf, readFeed } from '../../../delivery/feeds/feed-service';
import type { WebhookEndpoint } from '../../../delivery/endpoints/webhook-endpoint.entity';
import type { EntityManager } from '@mikro-orm/postgresql';
import type {
  WebhookEndpointCreate,
  WebhookEndpointFilterTest,
  WebhookEndpointFilterTestResult,
  WebhookEndpointTransformationTest,
  WebhookFeedAck,
  WebhookFeedPage,
  WebhookFeedState,
  WebhookEndpoint as WebhookEndpointRecord,
  WebhookEndpointRecover,
  WebhookEndpointRotate,
  WebhookEndpointUpdate,
} from '../../../generated/schemas';
import { iso } from '../../../domain/event-format';
import type { AppDeps } from '../../context';
import { integerParam, listBody, PAGE_PARAMS, pageOf } from '../../pagination';
import type { QueryParam, RouteSpec } from '../route-spec';
import { attemptJson, deliveryJson, recoveryJson, statusCodeClassParam } from './webhook-deliveries';

const SCHEMA = 'rest/webhook-endpoints.json#/$defs';
/** The longest a feed read waits for an event (`wait`): long enough to poll rarely, short of common proxy timeouts. */
const MAX_FEED_WAIT_SECONDS = 30;

/** A feed cursor in the query; which feed it is of, and the position, are checked by the route (positionOf). */
const FEED_CURSOR_PARAM: QueryParam = {
  name: 'after',
  description: 'A cursor this feed returned (next_cursor, an event\'s cursor, acknowledged_cursor): the events after it. Without it: after the acknowledged cursor.',
  schema: { type: 'string', minLength: 1, maxLength: 200 },
  parse: (raw) => raw,
};

/** A feed's position and lag as the API shows it. */
export function feedStateJson(feedId: string, state: FeedState): WebhookFeedState {
  return {
    cursor: feedCursor(feedId, state.position),
    acknowledged_cursor: feedCursor(feedId, state.acknowledged),
    unacknowledged_events: state.unacknowledgedEvents,
    oldest_unacknowledged_at: iso(state.oldestUnacknowledgedAt),
  };
}

/** The endpoints as the API shows them, each feed with its position and lag (read for all of them at once). */
export async function endpointsJson(em: EntityManager, endpoints: View<WebhookEndpoint>[], secret?: string): Promise<WebhookEndpointRecord[]> {
  const states = await feedStates(
    em,
    endpoints.filter((endpoint) => endpoint.delivery === 'feed').map((endpoint) => endpoint.id),
  );
  return endpoints.map((endpoint) => endpointJson(endpoint, states.get(endpoint.id) ?? null, secret));
}

/** One endpoint as the API shows it (endpointsJson). */
export const oneEndpointJson = async (em: EntityManager, endpoint: View<WebhookEndpoint>, secret?: string) => (await endpointsJson(em, [endpoint], secret))[0]!;

/** The endpoint as the API shows it, a feed with its `feed` state; the secret only when it was just issued. */
export function endpointJson(endpoint: View<WebhookEndpoint>, feed: FeedState | null, secret?: string): WebhookEndpointRecord {
  return {
    id: endpoint.id,
    delivery: endpoint.delivery,
    url: endpoint.url,
    description: endpoint.description,
    event_types: endpoint.eventTypes,
    payload_shape: endpoint.payloadShape,
    ordering: endpoint.ordering,
    status: endpoint.status,
    disabled_reason: endpoint.disabledReason,
    disabled_at: iso(endpoint.disabledAt),
    max_attempts_per_second: endpoint.maxAttemptsPerSecond,
    circuit_breaker: {
      state: endpoint.circuitState,
      failing_deliveries: endpoint.circuitFailingDeliveries.length,
      opened_at: iso(endpoint.circuitOpenedAt),
      next_probe_at: endpoint.circuitState === 'open' ? iso(endpoint.circuitProbeAt) : null,
    },
    previous_secret_expires_at: iso(endpoint.previousSecretExpiresAt),
    authentication: authenticationJson(endpoint),
    filter: endpoint.filter,
    transformation: endpoint.transformation,
    api_key_id: idOf(endpoint.apiKey),
    feed: feed && feedStateJson(endpoint.id, feed),
    created_at: endpoint.createdAt.toISOString(),
    updated_at: endpoint.updatedAt.toISOString(),
    ...(secret ? { secret } : {}),
  };
}

/** Subscriber endpoints of outbound webhooks (scope webhooks:manage). */
export function webhookEndpointRoutes({ secretBox, deliveryWorkflows, config, feedWaits }: AppDeps): RouteSpec[] {
  const policy = { allowLoopback: config.webhooks.allowLoopback };
  const common = { tag: 'webhook-endpoints', scope: WEBHOOKS_MANAGE_SCOPE, record: 'Webhook endpoint' };
  return [
    {
      ...common,
      method: 'POST',
      path: '/webhook-endpoints',
      summary: 'Register an endpoint',
      description:
        'Only public https URLs. The response carries the signing secret, once. authentication adds what an API gateway in front of the ' +
        'endpoint wants besides the signature: headers, OAuth 2.0 client credentials, a client certificate (mutual TLS); its secrets are never shown again. ' +
        'filter sends it only the events whose body matches its conditions. ' +
        'transformation (JSONata) sends it the body, headers and path its own system takes instead of the event\'s envelope (docs/transformations.md). ' +
        'delivery feed registers a feed instead: no url; its events are kept in order and read with GET /webhook-endpoints/{id}/feed.',
      body: { schema: `${SCHEMA}/create` },
      responses: { 201: { description: 'The endpoint, with its secret', schema: `${SCHEMA}/record` } },
      async handler(ctx) {
        const body = ctx.request.body as WebhookEndpointCreate;
        const { endpoint, secret } = await registerEndpoint(ctx.state.em, secretBox, policy, actorOf(ctx.state.principal), {
          delivery: body.delivery,
          url: body.url,
          eventTypes: body.event_types,
          payloadShape: body.payload_shape ?? 'A',
          ordering: body.ordering,
          description: body.description ?? null,
          apiKeyId: body.api_key_id,
          maxAttemptsPerSecond: body.max_attempts_per_second,
          authentication: body.authentication,
          filter: body.filter,
          transformation: body.transformation,
        });
        ctx.status = 201;
        ctx.set('Location', `${ctx.path}/${endpoint.id}`);
        ctx.body = await oneEndpointJson(ctx.state.em, endpoint, secret);
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/webhook-endpoints',
      summary: 'List endpoints',
      query: [...PAGE_PARAMS],
      responses: { 200: { description: 'A page of endpoints', listOf: `${SCHEMA}/record` } },
      async handler(ctx) {
        const page = pageOf(ctx.state.query);
        const { items, total, next } = await listEndpoints(ctx.state.em, ctx.state.principal.companyId, page);
        ctx.body = listBody(await endpointsJson(ctx.state.em, items), total, page, next);
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/webhook-endpoints/{id}',
      summary: 'Get an endpoint',
      responses: { 200: { description: 'The endpoint', schema: `${SCHEMA}/record` } },
      async handler(ctx) {
        ctx.body = await oneEndpointJson(ctx.state.em, await getEndpoint(ctx.state.em, ctx.state.principal.companyId, ctx.params.id!));
      },
    },
    {
      ...common,
      method: 'PUT',
      path: '/webhook-endpoints/{id}',
      summary: 'Update an endpoint',
      description:
        'A partial update; a new URL is checked like a registration. status active re-enables a disabled endpoint (and resolves its alert). ' +
        'In authentication each method given replaces the saved one and null removes it; a secret left out keeps its saved value. filter null removes the filter, transformation null the transformation. ' +
        'ordering none releases the deliveries that wait for their record\'s earlier one at once; per_record orders the deliveries not attempted yet.',
      body: { schema: `${SCHEMA}/update` },
      responses: { 200: { description: 'The endpoint as it is now', schema: `${SCHEMA}/record` } },
      async handler(ctx) {
        const body = ctx.request.body as WebhookEndpointUpdate;
        const endpoint = await updateEndpoint(ctx.state.em, deliveryWorkflows, secretBox, policy, ctx.state.principal.companyId, ctx.params.id!, {
          url: body.url,
          eventTypes: body.event_types,
          payloadShape: body.payload_shape,
          ordering: body.ordering,
          description: body.description,
          apiKeyId: body.api_key_id,
          status: body.status,
          maxAttemptsPerSecond: body.max_attempts_per_second,
          authentication: body.authentication,
          filter: body.filter,
          transformation: body.transformation,
        });
        ctx.body = await oneEndpointJson(ctx.state.em, endpoint);
      },
    },
    {
      ...common,
      method: 'DELETE',
      path: '/webhook-endpoints/{id}',
      summary: 'Delete an endpoint',
      description: 'It gets no new deliveries; its delivery log is kept.',
      responses: { 204: { description: 'Deleted' } },
      async handler(ctx) {
        await deleteEndpoint(ctx.state.em, deliveryWorkflows, ctx.state.principal.companyId, ctx.params.id!);
        ctx.status = 204;
      },
    },
    {
      ...common,
      method: 'POST',
      path: '/webhook-endpoints/{id}/rotate-secret',
      summary: "Rotate an endpoint's signing secret",
      description:
        'Deliveries from now on are signed with the new secret, returned here once; for overlap_seconds (24 h by default) they also carry the ' +
        "old secret's signature in X-Webhook-Signatures, so the subscriber can switch without losing deliveries.",
      body: { schema: `${SCHEMA}/rotate`, optional: true },
      responses: { 200: { description: 'The endpoint, with its new secret', schema: `${SCHEMA}/record` } },
      async handler(ctx) {
        const { overlap_seconds: overlapSeconds } = ctx.request.body as WebhookEndpointRotate;
        const overlapMs = overlapSeconds === undefined ? config.webhooks.secretOverlapMs : overlapSeconds * 1000;
        const { endpoint, secret } = await rotateEndpointSecret(ctx.state.em, secretBox, ctx.state.principal.companyId, ctx.params.id!, overlapMs);
        ctx.body = await oneEndpointJson(ctx.state.em, endpoint, secret);
      },
    },
    {
      ...common,
      method: 'POST',
      path: '/webhook-endpoints/{id}/close-circuit',
      summary: "Close an endpoint's circuit breaker",
      description:
        'Attempts to the endpoint go out again at once: the deliveries held by the open breaker are let through, oldest first, ' +
        'WEBHOOK_ENDPOINT_MAX_IN_FLIGHT at a time. Closing a closed breaker changes nothing.',
      responses: { 200: { description: 'The endpoint, its breaker closed', schema: `${SCHEMA}/record` } },
      async handler(ctx) {
        ctx.body = await oneEndpointJson(ctx.state.em, await closeEndpointCircuit(ctx.state.em, deliveryWorkflows, config.webhooks.admission, ctx.state.principal.companyId, ctx.params.id!));
      },
    },
    {
      ...common,
      method: 'POST',
      path: '/webhook-endpoints/{id}/test',
      summary: 'Send a test delivery',
      description: 'A webhook.test delivery now; answers with its outcome (202 when the attempt is still going).',
      responses: {
        200: { description: 'The test delivery and its attempt', schema: 'rest/webhook-deliveries.json#/$defs/record' },
        202: { description: 'The test delivery, still being attempted', schema: 'rest/webhook-deliveries.json#/$defs/record' },
      },
      async handler(ctx) {
        const { delivery, finished } = await sendTestDelivery(ctx.state.em, deliveryWorkflows, config, ctx.state.principal.companyId, ctx.params.id!);
        ctx.status = finished ? 200 : 202;
        ctx.body = deliveryJson(delivery, await listAttempts(ctx.state.em, delivery));
      },
    },
    {
      ...common,
      method: 'POST',
      path: '/webhook-endpoints/{id}/test-filter',
      summary: "Test an endpoint's filter",
      description:
        'Whether the endpoint would be sent an event: a body as it would be sent (event), or the company\'s most recent event of a type ' +
        '(event_type) in the endpoint\'s shape; against filter when given (to try one before saving it), else the endpoint\'s own.',
      body: { schema: `${SCHEMA}/filterTest` },
      responses: { 200: { description: 'Whether it matches, and what was tested', schema: `${SCHEMA}/filterTestResult` } },
      async handler(ctx) {
        const body = ctx.request.body as WebhookEndpointFilterTest;
        const result: WebhookEndpointFilterTestResult = await testEndpointFilter(ctx.state.em, ctx.state.principal.companyId, ctx.params.id!, {
          event: body.event as Record<string, unknown> | undefined,
          eventType: body.event_type,
          filter: body.filter,
        });
        ctx.body = result;
      },
    },
    {
      ...common,
      method: 'POST',
      path: '/webhook-endpoints/{id}/test-transformation',
      summary: "Test an endpoint's transformation",
      description:
        'What the endpoint would be sent for an event: a body as it would be sent untransformed (event), or the company\'s most recent event of a type ' +
        '(event_type) in the endpoint\'s shape, run through transformation when given (to try one before saving it), else the endpoint\'s own. ' +
        'Answers the body, headers and url that would be sent, or the error (the expression at fault, JSONata\'s message and position) that would fail the delivery.',
      body: { schema: `${SCHEMA}/transformationTest` },
      responses: { 200: { description: 'What would be sent, or why it would fail', schema: `${SCHEMA}/transformationTestResult` } },
      async handler(ctx) {
        const body = ctx.request.body as WebhookEndpointTransformationTest;
        ctx.body = await testEndpointTransformation(ctx.state.em, config.webhooks.transformation, ctx.state.principal.companyId, ctx.params.id!, {
          event: body.event as Record<string, unknown> | undefined,
          eventType: body.event_type,
          transformation: body.transformation,
        });
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/webhook-endpoints/{id}/attempts',
      summary: "List an endpoint's attempts",
      description: 'Every attempt to the endpoint, newest first, with the first 1 KiB of each response; status_code_class keeps those of one class.',
      query: [...PAGE_PARAMS, statusCodeClassParam],
      responses: { 200: { description: 'A page of attempts', listOf: 'rest/webhook-deliveries.json#/$defs/attempt' } },
      async handler(ctx) {
        const page = pageOf(ctx.state.query);
        const statusCodeClass = ctx.state.query.status_code_class as StatusCodeClass | undefined;
        const { items, total, next } = await listEndpointAttempts(ctx.state.em, ctx.state.principal.companyId, ctx.params.id!, page, statusCodeClass);
        ctx.body = listBody(items.map(attemptJson), total, page, next);
      },
    },
    {
      ...common,
      method: 'POST',
      path: '/webhook-endpoints/{id}/recover',
      summary: "Re-run an endpoint's failed deliveries",
      description:
        'Re-runs every failed or cancelled delivery of the endpoint made since `since`, in the background (the workflow ' +
        'webhook-recovery/<id>); follow it with the Location. The endpoint must be active.',
      body: { schema: 'rest/webhook-deliveries.json#/$defs/recover' },
      responses: { 202: { description: 'The recovery, started', schema: 'rest/webhook-deliveries.json#/$defs/recovery' } },
      async handler(ctx) {
        const { since } = ctx.request.body as WebhookEndpointRecover;
        const { companyId } = ctx.state.principal;
        const recovery = await startRecovery(ctx.state.em, deliveryWorkflows, companyId, ctx.params.id!, new Date(since));
        ctx.status = 202;
        ctx.set('Location', `${ctx.path.replace(/\/recover$/, '')}/recoveries/${recovery.id}`);
        ctx.body = recoveryJson(await getRecovery(ctx.state.em, recovery.id, { companyId, endpointId: ctx.params.id! }));
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/webhook-endpoints/{id}/recoveries/{recovery_id}',
      summary: 'Follow a recovery',
      description: 'How far the bulk re-run is, and where its deliveries stand now.',
      pathRecords: { recovery_id: 'Recovery' },
      responses: { 200: { description: 'The recovery', schema: 'rest/webhook-deliveries.json#/$defs/recovery' } },
      async handler(ctx) {
        ctx.body = recoveryJson(await getRecovery(ctx.state.em, ctx.params.recovery_id!, { companyId: ctx.state.principal.companyId, endpointId: ctx.params.id! }));
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/webhook-endpoints/{id}/feed',
      summary: "Read a feed's events",
      description:
        'The events after the cursor `after` (without it: after the acknowledged cursor), in feed order, each with the id, event type and body a ' +
        'webhook would carry; next_cursor reads on. A feed never skips an event that commits later, and never shows one twice at two positions. ' +
        'wait (seconds, up to 30) holds the request until an event arrives or the time is up (then data is empty). A cursor from before the events ' +
        'retention deleted (RETENTION_DELIVERY_DAYS) is a 410 CURSOR_EXPIRED naming the oldest cursor kept.',
      query: [
        { ...FEED_CURSOR_PARAM, name: 'after' },
        integerParam('limit', 'Events at most (1 to 1000).', 1, 1000, 100),
        integerParam('wait', 'Seconds to wait for an event when there is none after the cursor (0 to 30): a long poll.', 0, MAX_FEED_WAIT_SECONDS, 0),
      ],
      responses: { 200: { description: 'The events after the cursor, and the cursor to read on from', schema: `${SCHEMA}/feedPage` } },
      errors: { 410: 'The cursor is older than the events the feed keeps (CURSOR_EXPIRED); the message names the oldest cursor kept' },
      async handler(ctx) {
        const feed = await getFeed(ctx.state.em, ctx.state.principal.companyId, ctx.params.id!);
        const { after, limit, wait } = ctx.state.query as { after?: string; limit?: number; wait?: number };
        const position = after === undefined ? feed.feedAcknowledged : positionOf(feed.id, after, 'after');
        // Waiting starts before the read: an event committing between the two wakes it.
        const waiting = wait ? feedWaits.waitFor(feed.id, wait * 1000) : null;
        try {
          let page = await readFeed(ctx.state.em, feed, position, limit ?? 100);
          if (waiting && page.readTo === position) {
            await waiting.arrived;
            page = await readFeed(ctx.state.em, feed, position, limit ?? 100);
          }
          const body: WebhookFeedPage = {
            data: page.entries.map((entry) => ({
              id: entry.id,
              event_type: entry.eventType,
              created_at: entry.createdAt.toISOString(),
              cursor: feedCursor(feed.id, entry.position),
              body: JSON.parse(entry.payload) as Record<string, unknown>,
            })),
            next_cursor: feedCursor(feed.id, page.readTo),
          };
          ctx.body = body;
        } finally {
          waiting?.cancel();
        }
      },
    },
    {
      ...common,
      method: 'POST',
      path: '/webhook-endpoints/{id}/feed/ack',
      summary: "Acknowledge a feed's events",
      description:
        'Commits the consumer\'s position: every event up to the cursor is processed, and a read without after resumes from it. An older ' +
        'cursor than the one acknowledged changes nothing. Resolves the feed\'s feed_behind alert once what is left is within FEED_LAG_ALERT_MINUTES.',
      body: { schema: `${SCHEMA}/feedAck` },
      responses: { 200: { description: "The feed's position and lag now", schema: `${SCHEMA}/feed` } },
      errors: { 410: 'The cursor is older than the events the feed keeps (CURSOR_EXPIRED)' },
      async handler(ctx) {
        const { cursor } = ctx.request.body as WebhookFeedAck;
        const feed = await acknowledgeFeed(ctx.state.em, ctx.state.principal.companyId, ctx.params.id!, cursor, config.webhooks.feedLagAlertMs);
        ctx.body = feedStateJson(feed.id, (await feedStates(ctx.state.em, [feed.id])).get(feed.id)!);
      },
    },
  ];
}
