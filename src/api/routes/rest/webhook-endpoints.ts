import { actorOf } from '../../../domain/accounts/actor';
import { WEBHOOKS_MANAGE_SCOPE } from '../../../domain/accounts/scopes';
import { idOf, type View } from '../../../domain/page';
import { listAttempts, sendTestDelivery } from '../../../domain/webhooks/deliveries-service';
import {
  deleteEndpoint,
  getEndpoint,
  listEndpoints,
  registerEndpoint,
  rotateEndpointSecret,
  updateEndpoint,
} from '../../../domain/webhooks/endpoints-service';
import type { WebhookEndpoint } from '../../../domain/webhooks/webhook-endpoint.entity';
import type { WebhookEndpointCreate, WebhookEndpoint as WebhookEndpointRecord, WebhookEndpointUpdate } from '../../../generated/schemas';
import type { AppDeps } from '../../context';
import { listBody, PAGE_PARAMS, pageOf } from '../../pagination';
import type { RouteSpec } from '../route-spec';
import { deliveryJson } from './webhook-deliveries';

const SCHEMA = 'rest/webhook-endpoints.json#/$defs';

/** The endpoint as the API shows it; the secret only when it was just issued. */
export function endpointJson(endpoint: View<WebhookEndpoint>, secret?: string): WebhookEndpointRecord {
  return {
    id: endpoint.id,
    url: endpoint.url,
    description: endpoint.description,
    event_types: endpoint.eventTypes,
    payload_shape: endpoint.payloadShape,
    status: endpoint.status,
    api_key_id: idOf(endpoint.apiKey),
    created_at: endpoint.createdAt.toISOString(),
    updated_at: endpoint.updatedAt.toISOString(),
    ...(secret ? { secret } : {}),
  };
}

/** Subscriber endpoints of outbound webhooks (scope webhooks:manage). */
export function webhookEndpointRoutes({ secretBox, temporal, config }: AppDeps): RouteSpec[] {
  const policy = { allowLoopback: config.webhooks.allowLoopback };
  const common = { tag: 'webhook-endpoints', scope: WEBHOOKS_MANAGE_SCOPE, record: 'Webhook endpoint' };
  return [
    {
      ...common,
      method: 'POST',
      path: '/webhook-endpoints',
      summary: 'Register an endpoint',
      description: 'Only public https URLs. The response carries the signing secret, once.',
      body: { schema: `${SCHEMA}/create` },
      responses: { 201: { description: 'The endpoint, with its secret', schema: `${SCHEMA}/record` } },
      async handler(ctx) {
        const body = ctx.request.body as WebhookEndpointCreate;
        const { endpoint, secret } = await registerEndpoint(ctx.state.em, secretBox, policy, actorOf(ctx.state.principal), {
          url: body.url,
          eventTypes: body.event_types,
          payloadShape: body.payload_shape ?? 'A',
          description: body.description ?? null,
          apiKeyId: body.api_key_id,
        });
        ctx.status = 201;
        ctx.set('Location', `${ctx.path}/${endpoint.id}`);
        ctx.body = endpointJson(endpoint, secret);
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
        const { items, total } = await listEndpoints(ctx.state.em, ctx.state.principal.companyId, page);
        ctx.body = listBody(items.map((e) => endpointJson(e)), total, page);
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/webhook-endpoints/{id}',
      summary: 'Get an endpoint',
      responses: { 200: { description: 'The endpoint', schema: `${SCHEMA}/record` } },
      async handler(ctx) {
        ctx.body = endpointJson(await getEndpoint(ctx.state.em, ctx.state.principal.companyId, ctx.params.id!));
      },
    },
    {
      ...common,
      method: 'PUT',
      path: '/webhook-endpoints/{id}',
      summary: 'Update an endpoint',
      description: 'A partial update; a new URL is checked like a registration.',
      body: { schema: `${SCHEMA}/update` },
      responses: { 200: { description: 'The endpoint as it is now', schema: `${SCHEMA}/record` } },
      async handler(ctx) {
        const body = ctx.request.body as WebhookEndpointUpdate;
        const endpoint = await updateEndpoint(ctx.state.em, policy, ctx.state.principal.companyId, ctx.params.id!, {
          url: body.url,
          eventTypes: body.event_types,
          payloadShape: body.payload_shape,
          description: body.description,
          apiKeyId: body.api_key_id,
          status: body.status,
        });
        ctx.body = endpointJson(endpoint);
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
        await deleteEndpoint(ctx.state.em, ctx.state.principal.companyId, ctx.params.id!);
        ctx.status = 204;
      },
    },
    {
      ...common,
      method: 'POST',
      path: '/webhook-endpoints/{id}/rotate-secret',
      summary: "Rotate an endpoint's signing secret",
      description: 'Deliveries from now on are signed with the new secret, returned here once.',
      responses: { 200: { description: 'The endpoint, with its new secret', schema: `${SCHEMA}/record` } },
      async handler(ctx) {
        const { endpoint, secret } = await rotateEndpointSecret(ctx.state.em, secretBox, ctx.state.principal.companyId, ctx.params.id!);
        ctx.body = endpointJson(endpoint, secret);
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
        const { delivery, completed } = await sendTestDelivery(ctx.state.em, temporal, config, ctx.state.principal.companyId, ctx.params.id!);
        ctx.status = completed ? 200 : 202;
        ctx.body = deliveryJson(delivery, await listAttempts(ctx.state.em, delivery));
      },
    },
  ];
}
