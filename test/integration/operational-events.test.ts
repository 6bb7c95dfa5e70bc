import { type ReceivedRequest, startReceiver, type TestReceiver } from '../helpers/https-receiver';
import { waitFor } from '../helpers/processes';
import { createTenant, request, startStack, type Tenant, testConfig, type TestStack } from '../helpers/stack';
import { type RegisteredEndpoint, registerEndpoint, verifiedAsReceiver, waitForDeliveryStatus } from '../helpers/webhooks';

interface OperationalBody {
  event_id: string;
  event_type: string;
  company_id: string;
  data: { endpoint: { id: string; host: string; description: string | null }; [field: string]: unknown };
}

/**
 * Issue 47: the account's own systems are told about its deliveries through webhooks. Each operational event is made to
 * happen for real (a 410, a breaker opened by failing deliveries and closed by a probe, a delivery using up its
 * attempts, its re-run, a disabling through REST) and must reach the operations endpoint signed, and never the endpoint
 * it is about. The stack's close checks every event's data against its schema.
 */
describe('operational events', () => {
  let stack: TestStack;
  let tenant: Tenant;
  /** The account's operations system: subscribed to every operational event. */
  let opsHook: TestReceiver;
  let ops: RegisteredEndpoint;
  /** Subscribed to everything: that is every event of the company's records, not the operational ones. */
  let everythingHook: TestReceiver;

  const call = (method: string, path: string, body?: unknown) => request(stack.baseUrl, method, `/api/v1${path}`, { key: tenant.key, body });
  const bodiesOf = (requests: ReceivedRequest[]) => requests.map((r) => JSON.parse(r.body) as OperationalBody);
  /** The operational event of a type about an endpoint, once the operations endpoint has received it. */
  const opsReceived = (eventType: string, endpointId: string, timeoutMs = 30_000) =>
    waitFor(
      async () => opsHook.requests.find((r) => {
        const body = JSON.parse(r.body) as OperationalBody;
        return body.event_type === eventType && body.data.endpoint?.id === endpointId;
      }),
      timeoutMs,
      `${eventType} about ${endpointId} at the operations endpoint`,
    );

  beforeAll(async () => {
    stack = await startStack({
      config: await testConfig({ RATE_LIMIT_MULTIPLIER: '100', WEBHOOK_CIRCUIT_FAILURES: '2', WEBHOOK_CIRCUIT_COOLDOWN: '1', WEBHOOK_CIRCUIT_MAX_COOLDOWN: '1' }),
    });
    tenant = await createTenant(stack.orm, ['admin']);
    opsHook = await startReceiver();
    ops = await registerEndpoint(stack, tenant.key, { url: opsHook.url, event_types: ['endpoint.*', 'delivery.*'], api_key_id: null, description: 'operations' });
    everythingHook = await startReceiver();
    await registerEndpoint(stack, tenant.key, { url: everythingHook.url, event_types: ['*'], api_key_id: null });
  });
  afterAll(async () => {
    await everythingHook.close();
    await opsHook.close();
    await stack.close();
  });

  it('lists the operational event types among those an endpoint can subscribe to (OpenAPI)', async () => {
    const eventTypes = JSON.stringify((await request(stack.baseUrl, 'GET', '/api/v1/openapi.json')).body);
    for (const name of ['endpoint.disabled', 'endpoint.circuit_opened', 'endpoint.circuit_closed', 'delivery.failed', 'delivery.recovered']) expect(eventTypes).toContain(`"${name}"`);
  });

  it('raises endpoint.circuit_opened when failing deliveries open the breaker and endpoint.circuit_closed when a probe succeeds, never to that endpoint', async () => {
    const flakyHook = await startReceiver();
    try {
      flakyHook.respondWith(() => ({ status: 503, body: 'down for maintenance' }));
      // Subscribed to the endpoint events too: the ones about itself must not come to it.
      const flaky = await registerEndpoint(stack, tenant.key, { url: flakyHook.url, event_types: ['vendor.*', 'endpoint.*'], api_key_id: null, description: 'flaky' });
      for (const name of ['Apex', 'Birch', 'Cobalt']) expect((await call('POST', '/vendors', { vendor_name: name })).status).toBe(201);

      const opened = bodiesOf([await opsReceived('endpoint.circuit_opened', flaky.id)])[0]!;
      expect(opened).toMatchObject({
        event_type: 'endpoint.circuit_opened',
        company_id: tenant.companyId,
        data: { endpoint: { id: flaky.id, host: 'localhost', description: 'flaky' }, opened_at: expect.any(String), next_probe_at: expect.any(String), failing_deliveries: 2 },
      });
      flakyHook.respondWith(() => ({ status: 200 }));
      const closed = bodiesOf([await opsReceived('endpoint.circuit_closed', flaky.id)])[0]!;
      expect(closed.data).toMatchObject({ endpoint: { id: flaky.id }, opened_at: opened.data.opened_at, closed_at: expect.any(String) });
      for (const received of opsHook.requests) expect(verifiedAsReceiver(ops.secret, received)).toBe(true);

      // Every vendor gets through once the breaker has closed; nothing about the flaky endpoint was made for it.
      await waitFor(async () => new Set(bodiesOf(flakyHook.requests).filter((b) => b.event_type === 'vendor.created').map((b) => b.event_id)).size === 3, 30_000, 'the vendors delivered');
      expect(bodiesOf(flakyHook.requests).filter((b) => b.event_type.startsWith('endpoint.') && b.data.endpoint.id === flaky.id)).toEqual([]);
      const [{ n }] = await stack.em().execute<{ n: number }[]>(
        `select count(*)::int as n from webhook_deliveries d join outbox_events o on o.id = d.event_id where d.endpoint_id = ? and o.data -> 'endpoint' ->> 'id' = ?`,
        [flaky.id, flaky.id],
      );
      expect(n).toBe(0);
      await call('DELETE', `/webhook-endpoints/${flaky.id}`);
    } finally {
      await flakyHook.close();
    }
  });

  it('raises endpoint.disabled when an endpoint answers 410 Gone', async () => {
    const goneHook = await startReceiver();
    try {
      goneHook.respondWith(() => ({ status: 410, body: 'this integration was uninstalled' }));
      const gone = await registerEndpoint(stack, tenant.key, { url: goneHook.url, event_types: ['customer.created'], api_key_id: null });
      expect((await call('POST', '/customers', { name: 'Harbourfront Holdings' })).status).toBe(201);
      const disabled = bodiesOf([await opsReceived('endpoint.disabled', gone.id)])[0]!;
      expect(disabled.data).toEqual({
        endpoint: { id: gone.id, host: 'localhost', description: null },
        reason: expect.stringContaining('410 Gone'),
        disabled_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      });
      expect((await call('GET', `/webhook-endpoints/${gone.id}`)).body.status).toBe('disabled');
    } finally {
      await goneHook.close();
    }
  });

  it('raises delivery.failed when a delivery uses up its attempts, and delivery.recovered when its re-run delivers it', async () => {
    const deadHook = await startReceiver();
    try {
      deadHook.respondWith(() => ({ status: 500, body: 'internal error' }));
      const dead = await registerEndpoint(stack, tenant.key, { url: deadHook.url, event_types: ['location.created'], api_key_id: null, description: 'dead' });
      const customer = await call('POST', '/customers', { name: 'Lakeshore Estates' });
      expect((await call('POST', '/locations', { customer_id: customer.body.id, name: 'Main yard' })).status).toBe(201);

      const failed = bodiesOf([await opsReceived('delivery.failed', dead.id)])[0]!;
      expect(failed.data).toEqual({
        delivery_id: expect.any(String),
        event_id: expect.any(String),
        event_type: 'location.created',
        endpoint: { id: dead.id, host: 'localhost', description: 'dead' },
        attempt_count: 6,
        last_status_code: 500,
        last_error: expect.any(String),
        failed_at: expect.any(String),
      });
      expect(deadHook.requests).toHaveLength(6);
      const deliveryId = failed.data.delivery_id as string;
      expect((await call('GET', `/webhook-deliveries/${deliveryId}`)).body.status).toBe('failed');

      deadHook.respondWith(() => ({ status: 200 }));
      const rerun = await call('POST', `/webhook-deliveries/${deliveryId}/retry`, { reason: 'receiver fixed' });
      expect(rerun.status).toBe(200);
      await waitForDeliveryStatus(stack, tenant.key, deliveryId, ['delivered']);
      const recovered = bodiesOf([await opsReceived('delivery.recovered', dead.id)])[0]!;
      expect(recovered.data).toEqual({
        delivery_id: deliveryId,
        event_id: failed.data.event_id,
        event_type: 'location.created',
        endpoint: { id: dead.id, host: 'localhost', description: 'dead' },
        attempt_count: 7,
        failed_at: failed.data.failed_at,
        delivered_at: expect.any(String),
      });
      // Raised once each.
      expect(bodiesOf(opsHook.requests).filter((b) => b.data.endpoint.id === dead.id).map((b) => b.event_type)).toEqual(['delivery.failed', 'delivery.recovered']);
    } finally {
      await deadHook.close();
    }
  });

  it('raises endpoint.disabled when an endpoint is disabled through REST, and nothing when it is re-enabled', async () => {
    const hook = await startReceiver();
    try {
      const endpoint = await registerEndpoint(stack, tenant.key, { url: hook.url, event_types: ['employee.created'], api_key_id: null });
      expect((await call('PUT', `/webhook-endpoints/${endpoint.id}`, { status: 'disabled' })).status).toBe(200);
      const disabled = bodiesOf([await opsReceived('endpoint.disabled', endpoint.id)])[0]!;
      expect(disabled.data.reason).toBe('disabled through the API');
      expect((await call('PUT', `/webhook-endpoints/${endpoint.id}`, { status: 'active' })).status).toBe(200);
      await waitFor(async () => (await stack.em().execute(`select count(*)::int as n from outbox_events where company_id = ? and dispatched_at is null`, [tenant.companyId]))[0].n === 0, 10_000, 'the outbox dispatched');
      expect(bodiesOf(opsHook.requests).filter((b) => b.data.endpoint.id === endpoint.id).map((b) => b.event_type)).toEqual(['endpoint.disabled']);
    } finally {
      await hook.close();
    }
  });

  it('raises no delivery.failed for a failed delivery of an operational event, so two failing endpoints cannot tell each other for ever', async () => {
    const [firstHook, secondHook] = await Promise.all([startReceiver(), startReceiver()]);
    try {
      for (const hook of [firstHook, secondHook]) hook.respondWith(() => ({ status: 400, body: 'refused' }));
      const first = await registerEndpoint(stack, tenant.key, { url: firstHook.url, event_types: ['delivery.failed', 'vendor.deleted'], api_key_id: null });
      const second = await registerEndpoint(stack, tenant.key, { url: secondHook.url, event_types: ['delivery.failed'], api_key_id: null });
      const vendor = await call('POST', '/vendors', { vendor_name: 'Doomed' });
      expect((await call('DELETE', `/vendors/${vendor.body.id}`)).status).toBe(204);
      // The first endpoint refuses the vendor.deleted (a 4xx fails it at once): the second is told, and refuses that too.
      await opsReceived('delivery.failed', first.id);
      await waitFor(async () => secondHook.requests.length === 1, 15_000, 'the second endpoint told of the failure');
      await waitFor(async () => (await stack.em().execute(`select count(*)::int as n from webhook_deliveries where endpoint_id = ? and status = 'failed'`, [second.id]))[0].n === 1, 15_000, 'its delivery failed');
      await waitFor(async () => (await stack.em().execute(`select count(*)::int as n from outbox_events where company_id = ? and dispatched_at is null`, [tenant.companyId]))[0].n === 0, 10_000, 'the outbox dispatched');
      const aboutSecond = await stack.em().execute<{ n: number }[]>(`select count(*)::int as n from outbox_events where company_id = ? and data -> 'endpoint' ->> 'id' = ?`, [tenant.companyId, second.id]);
      expect(aboutSecond[0]!.n).toBe(0);
    } finally {
      await Promise.all([firstHook.close(), secondHook.close()]);
    }
  });

  it('sends none of them to an endpoint subscribed to everything (*)', async () => {
    const types = new Set(bodiesOf(everythingHook.requests).map((b) => b.event_type));
    expect(types.size).toBeGreaterThan(0);
    expect([...types].filter((type) => type.startsWith('endpoint.') || type.startsWith('delivery.'))).toEqual([]);
  });
});
