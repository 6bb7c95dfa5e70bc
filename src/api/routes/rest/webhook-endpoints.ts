import Router from '@koa/router';
import { actorOf } from '../../../domain/accounts/actor';
import { WEBHOOKS_MANAGE_SCOPE } from '../../../domain/accounts/scopes';
import { listAttempts, sendTestDelivery } from '../../../domain/webhooks/deliveries-service';
import {
  deleteEndpoint,
  getEndpoint,
  listEndpoints,
  registerEndpoint,
  rotateEndpointSecret,
  updateEndpoint,
} from '../../../domain/webhooks/endpoints-service';
import type { EndpointStatus, PayloadShape, WebhookEndpoint } from '../../../domain/webhooks/webhook-endpoint.entity';
import { idOf, type View } from '../../../domain/page';
import type { AppDeps, AppState } from '../../context';
import { requireScope } from '../../middleware/authenticate';
import { listBody, parsePage } from '../../pagination';
import { recordId } from '../../record-id';
import { deliveryJson } from './webhook-deliveries';

interface EndpointBody {
  url?: string;
  event_types?: string[];
  payload_shape?: PayloadShape;
  description?: string | null;
  api_key_id?: string | null;
  status?: EndpointStatus;
}

/** The endpoint as the API shows it; the secret only when it was just issued. */
export function endpointJson(endpoint: View<WebhookEndpoint>, secret?: string) {
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
export function webhookEndpointsRoutes({ validator, secretBox, temporal, config }: AppDeps): Router<AppState> {
  const router = new Router<AppState>();
  const policy = { allowLoopback: config.webhooks.allowLoopback };
  const manage = requireScope(WEBHOOKS_MANAGE_SCOPE);

  router.post('/webhook-endpoints', manage, async (ctx) => {
    const body = validator.validate<EndpointBody & { url: string; event_types: string[] }>('rest/webhook-endpoint.create.json', ctx.request.body);
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
  });

  router.get('/webhook-endpoints', manage, async (ctx) => {
    const page = parsePage(ctx.query);
    const { items, total } = await listEndpoints(ctx.state.em, ctx.state.principal.companyId, page);
    ctx.body = listBody(items.map((e) => endpointJson(e)), total, page);
  });

  router.get('/webhook-endpoints/:id', manage, async (ctx) => {
    ctx.body = endpointJson(await getEndpoint(ctx.state.em, ctx.state.principal.companyId, recordId(ctx.params.id, 'Webhook endpoint')));
  });

  router.put('/webhook-endpoints/:id', manage, async (ctx) => {
    const body = validator.validate<EndpointBody>('rest/webhook-endpoint.update.json', ctx.request.body);
    const endpoint = await updateEndpoint(ctx.state.em, policy, ctx.state.principal.companyId, recordId(ctx.params.id, 'Webhook endpoint'), {
      url: body.url,
      eventTypes: body.event_types,
      payloadShape: body.payload_shape,
      description: body.description,
      apiKeyId: body.api_key_id,
      status: body.status,
    });
    ctx.body = endpointJson(endpoint);
  });

  router.delete('/webhook-endpoints/:id', manage, async (ctx) => {
    await deleteEndpoint(ctx.state.em, ctx.state.principal.companyId, recordId(ctx.params.id, 'Webhook endpoint'));
    ctx.status = 204;
  });

  router.post('/webhook-endpoints/:id/rotate-secret', manage, async (ctx) => {
    const { endpoint, secret } = await rotateEndpointSecret(ctx.state.em, secretBox, ctx.state.principal.companyId, recordId(ctx.params.id, 'Webhook endpoint'));
    ctx.body = endpointJson(endpoint, secret);
  });

  /** Sends a webhook.test delivery now and answers with its outcome (202 if the attempt is still going). */
  router.post('/webhook-endpoints/:id/test', manage, async (ctx) => {
    const { delivery, completed } = await sendTestDelivery(
      ctx.state.em,
      temporal,
      config,
      ctx.state.principal.companyId,
      recordId(ctx.params.id, 'Webhook endpoint'),
    );
    ctx.status = completed ? 200 : 202;
    ctx.body = deliveryJson(delivery, await listAttempts(ctx.state.em, delivery));
  });

  return router;
}
