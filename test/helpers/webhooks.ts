import { verifyWebhook, WebhookVerificationError } from '@construction-integration/client';
import type { OutboxDispatcherOptions } from '../../src/delivery/outbox/dispatcher';
import { runsPerEndpoint } from '../../src/delivery/outbox/endpoint-room';
import { createLogger } from '../../src/logger';
import { temporalDeliveryWorkflows } from '../../src/temporal/temporal-delivery-workflows';
import type { ReceivedRequest } from './https-receiver';
import { waitFor } from './processes';
import { issueTestKey, request, type Tenant, type TestStack } from './stack';

/** Another API key of the tenant's company. */
export async function addApiKey(stack: TestStack, tenant: Tenant, scopes: string[] = ['admin']): Promise<Tenant> {
  return issueTestKey(stack.orm, tenant.companyId, scopes);
}

/** An outbox dispatcher of a test's own on the stack, with the stack's bounds: polling every 250 ms, no logs. */
export function dispatcherOptions(stack: TestStack): OutboxDispatcherOptions {
  return {
    orm: stack.orm,
    deliveryWorkflows: temporalDeliveryWorkflows(stack.temporal, stack.config.temporal.taskQueues),
    databaseUrl: stack.config.databaseUrl,
    pollMs: 250,
    logger: createLogger('silent'),
    ...runsPerEndpoint(stack.config.webhooks.admission),
    maxInFlightPerEndpoint: stack.config.webhooks.admission.maxInFlight,
    transformationLimits: stack.config.webhooks.transformation,
  };
}

export interface RegisteredEndpoint {
  id: string;
  secret: string;
  url: string;
}

/** POST /webhook-endpoints with `key` (the endpoint then belongs to that key unless api_key_id says otherwise). */
export async function registerEndpoint(stack: TestStack, key: string, body: Record<string, unknown>): Promise<RegisteredEndpoint> {
  const response = await request(stack.baseUrl, 'POST', '/api/v1/webhook-endpoints', { key, body });
  if (response.status !== 201) throw new Error(`registration failed: ${response.status} ${JSON.stringify(response.body)}`);
  return { id: response.body.id, secret: response.body.secret, url: response.body.url };
}

/**
 * Verifies a delivery as subscribers do, with the client SDK's verifyWebhook (docs/examples/webhook-receiver.mjs
 * uses it), which does what webhooks.md §5 tells receivers to: HMAC-SHA256 of `<X-Webhook-Timestamp>.<raw body>`
 * with the endpoint secret, compared in constant time, timestamp at most 300 s old.
 */
export function verifiedAsReceiver(secret: string | string[], received: ReceivedRequest): boolean {
  try {
    verifyWebhook(received.body, received.headers, secret);
    return true;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return false;
    throw error;
  }
}

/**
 * Waits (polling the database, not the rate-limited API) until the delivery's status is one of `statuses`,
 * then returns it as GET /webhook-deliveries/{id} shows it.
 */
export async function waitForDeliveryStatus(stack: TestStack, key: string, deliveryId: string, statuses: string[], timeoutMs = 30_000) {
  await waitFor(
    async () => {
      const [row] = await stack.em().execute<{ status: string }[]>('select status from webhook_deliveries where id = ?', [deliveryId]);
      return row && statuses.includes(row.status);
    },
    timeoutMs,
    `delivery ${deliveryId} to become ${statuses.join(' or ')}`,
  );
  return (await request(stack.baseUrl, 'GET', `/api/v1/webhook-deliveries/${deliveryId}`, { key })).body;
}

/** Ids of the deliveries made for an endpoint so far, oldest first (from the database, for polling). */
export async function deliveryIdsOf(stack: TestStack, endpointId: string): Promise<string[]> {
  const rows = await stack.em().execute<{ id: string }[]>('select id from webhook_deliveries where endpoint_id = ? order by created_at, id', [endpointId]);
  return rows.map((r) => r.id);
}

/** The deliveries of a company's endpoint, through the REST log. */
export async function deliveriesOf(stack: TestStack, key: string, endpointId: string) {
  const response = await request(stack.baseUrl, 'GET', `/api/v1/webhook-deliveries?endpoint_id=${endpointId}&limit=100`, { key });
  return response.body.data as any[];
}
