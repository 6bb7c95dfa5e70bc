import { ApiError, type ConstructionClient, createClient, verifyWebhook, WebhookVerificationError } from '@construction-integration/client';
import { createHmac, randomUUID } from 'node:crypto';
import { startReceiver, type TestReceiver } from '../helpers/https-receiver';
import { createTenant, startStack, type Tenant, type TestStack } from '../helpers/stack';
import { addApiKey } from '../helpers/webhooks';

/** The client SDK (sdk/typescript, as built) against the service: REST, inbound and a real delivery. */
describe('client SDK against the service', () => {
  let stack: TestStack;
  const receivers: TestReceiver[] = [];

  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await stack.close();
  });

  const clientOf = (tenant: Tenant, options: Partial<Parameters<typeof createClient>[0]> = {}): ConstructionClient =>
    createClient({ baseUrl: `${stack.baseUrl}/api/v1`, apiKey: tenant.key, signingSecret: tenant.signingSecret, ...options });

  /** The ApiError `call` rejects with. */
  const apiErrorOf = async (call: Promise<unknown>): Promise<ApiError> => {
    const error = await call.then(
      () => new Error('the call succeeded'),
      (e: unknown) => e,
    );
    if (!(error instanceof ApiError)) throw error;
    return error;
  };

  it('creates, gets, lists page by page, updates and deletes a record', async () => {
    const tenant = await createTenant(stack.orm);
    const queries: string[] = [];
    const client = clientOf(tenant, {
      fetch: (request) => {
        if (request.method === 'GET') queries.push(new URL(request.url).search);
        return fetch(request);
      },
    });
    const names = ['Alpha', 'Bravo', 'Charlie', 'Delta', 'Echo'].map((name) => `${name} Construction`);
    const created = [];
    for (const name of names) created.push(await client.post('/customers', { body: { name, status: 'Active' } }));
    expect(created.map((c) => c.name)).toEqual(names);

    const first = created[0]!;
    expect(await client.get('/customers/{id}', { params: { path: { id: first.id } } })).toEqual(first);

    queries.length = 0;
    const listed: string[] = [];
    for await (const customer of client.paginate('/customers', { params: { query: { limit: 2 } } })) listed.push(customer.name);
    expect(listed).toEqual(names);
    // By cursor (pagination.next_cursor), from the first page or from the offset given.
    expect(queries).toEqual(['?limit=2', expect.stringMatching(/^\?limit=2&after=[\w-]+$/), expect.stringMatching(/^\?limit=2&after=[\w-]+$/)]);
    queries.length = 0;
    const fromOffset: string[] = [];
    for await (const customer of client.paginate('/customers', { params: { query: { limit: 2, offset: 1 } } })) fromOffset.push(customer.name);
    expect(fromOffset).toEqual(names.slice(1));
    expect(queries).toEqual(['?limit=2&offset=1', expect.stringMatching(/^\?limit=2&after=[\w-]+$/)]);
    // From a service older than cursors (no next_cursor): by offset.
    const older = clientOf(tenant, {
      fetch: async (request) => {
        queries.push(new URL(request.url).search);
        const response = await fetch(request);
        const body = (await response.json()) as { pagination: Record<string, unknown> };
        delete body.pagination.next_cursor;
        const headers = new Headers(response.headers);
        headers.delete('content-length');
        return new Response(JSON.stringify(body), { status: response.status, headers });
      },
    });
    queries.length = 0;
    const byOffset: string[] = [];
    for await (const customer of older.paginate('/customers', { params: { query: { limit: 2 } } })) byOffset.push(customer.name);
    expect(byOffset).toEqual(names);
    expect(queries).toEqual(['?limit=2', '?limit=2&offset=2', '?limit=2&offset=4']);

    const updated = await client.put('/customers/{id}', { params: { path: { id: first.id } }, body: { status: 'Inactive', phone: '+1 416 555 0100' } });
    expect(updated).toMatchObject({ id: first.id, name: first.name, status: 'Inactive', phone: '+1 416 555 0100' });

    expect(await client.delete('/customers/{id}', { params: { path: { id: first.id } } })).toBeUndefined();
    const gone = await apiErrorOf(client.get('/customers/{id}', { params: { path: { id: first.id } } }));
    expect(gone).toMatchObject({ status: 404, code: 'NOT_FOUND', requestId: expect.any(String) });
    const listedAfter: string[] = [];
    for await (const customer of client.paginate('/customers')) listedAfter.push(customer.name);
    expect(listedAfter).toEqual(names.slice(1));
  });

  it("throws the service's error body as an ApiError", async () => {
    const client = clientOf(await createTenant(stack.orm));
    const invalid = await apiErrorOf(client.post('/customers', { body: { name: 'Acme', email: 'not an email' } }));
    expect(invalid).toMatchObject({ name: 'ApiError', status: 400, code: 'INVALID_REQUEST', details: { field: 'email', reason: expect.any(String) } });
    expect(invalid.message).toMatch(/email/);

    const readOnly = clientOf(await createTenant(stack.orm, ['customers:read']));
    expect(await apiErrorOf(readOnly.post('/customers', { body: { name: 'Acme' } }))).toMatchObject({ status: 403, code: 'FORBIDDEN' });
    expect(await apiErrorOf(clientOf({ ...(await createTenant(stack.orm)), key: 'cik_unknown_key' }).get('/customers'))).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
  });

  it('makes writes idempotent: a given Idempotency-Key replays the first response', async () => {
    const client = clientOf(await createTenant(stack.orm));
    const key = `sdk-${randomUUID()}`;
    const send = () => client.raw.POST('/customers', { body: { name: 'Replayed Ltd' }, headers: { 'Idempotency-Key': key } });
    const first = await send();
    const again = await send();
    expect(first.response.status).toBe(201);
    expect(again.response.status).toBe(201);
    expect(again.response.headers.get('Idempotent-Replayed')).toBe('true');
    expect(again.data!.id).toBe(first.data!.id);
    expect(first.response.headers.get('Location')).toBe(`/api/v1/customers/${first.data!.id}`);
  });

  it("sends inbound operations signed with the key's signing secret", async () => {
    const tenant = await createTenant(stack.orm);
    const client = clientOf(tenant);
    expect(await client.sendInbound('test.connection')).toMatchObject({ success: true });

    const result = await client.sendInbound('customer.created', { name: 'Inbound Supply Co', type: 'commercial' }, { source: 'sdk-test' });
    expect(result).toMatchObject({ success: true, event_id: expect.any(String), record_id: expect.any(String) });
    expect(await client.get('/customers/{id}', { params: { path: { id: result.record_id! } } })).toMatchObject({ name: 'Inbound Supply Co', type: 'commercial' });

    const search = await client.sendInbound('project.search', { search_term: 'no such project' });
    expect(search).toEqual({ success: true, action: 'search', results: [], count: 0 });

    const missing = await apiErrorOf(client.sendInbound('customer.updated', { customer_name: 'Nobody Ltd', status: 'Inactive' }));
    expect(missing).toMatchObject({ status: 404, code: 'NOT_FOUND', details: { field: 'data.customer_name' } });
    const forged = await apiErrorOf(clientOf(tenant, { signingSecret: 'whsec_not_the_secret' }).sendInbound('test.connection'));
    expect(forged).toMatchObject({ status: 403, code: 'INVALID_SIGNATURE' });
  });

  it("registers an endpoint's credentials through the typed client: a secret header goes with each delivery and is read back as a hint", async () => {
    const sender = await createTenant(stack.orm);
    const subscriber = clientOf(await addApiKey(stack, sender));
    const hook = await startReceiver();
    receivers.push(hook);
    const gatewayKey = 'gw_live_0123456789abcdef';
    const endpoint = await subscriber.post('/webhook-endpoints', {
      body: { url: hook.url, event_types: ['customer.created'], authentication: { headers: [{ name: 'X-Gateway-Key', value: gatewayKey, secret: true }] } },
    });
    expect(endpoint.authentication).toMatchObject({ headers: [{ name: 'X-Gateway-Key', secret: true, value: null, value_hint: 'cdef' }], oauth: null, client_certificate: null });

    await clientOf(sender).post('/customers', { body: { name: 'Gateway Ltd' } });
    const [delivery] = await hook.waitForRequests(1, 20_000);
    expect(delivery!.headers['x-gateway-key']).toBe(gatewayKey);
  });

  it("orders an endpoint's deliveries per record through the typed client, and reads each delivery's record", async () => {
    const sender = await createTenant(stack.orm);
    const subscriber = clientOf(await addApiKey(stack, sender));
    const hook = await startReceiver();
    receivers.push(hook);
    const endpoint = await subscriber.post('/webhook-endpoints', { body: { url: hook.url, event_types: ['customer.*'], ordering: 'per_record' } });
    expect(endpoint.ordering).toBe('per_record');

    const customer = await clientOf(sender).post('/customers', { body: { name: 'Ordered Ltd' } });
    const [received] = await hook.waitForRequests(1, 20_000);
    const delivery = await subscriber.get('/webhook-deliveries/{id}', { params: { path: { id: String(received!.headers['x-webhook-id']) } } });
    expect(delivery).toMatchObject({ record_key: `customer:${customer.id}`, held_reason: null });
    const unordered = await subscriber.put('/webhook-endpoints/{id}', { params: { path: { id: endpoint.id } }, body: { ordering: 'none' } });
    expect(unordered.ordering).toBe('none');
  });

  it('verifies a real delivery, refuses it tampered with or too old, and accepts the old secret during a rotation', async () => {
    const sender = await createTenant(stack.orm);
    // Changes are not delivered back to the endpoint of the key that made them: the endpoint is another key's.
    const subscriber = clientOf(await addApiKey(stack, sender));
    const client = clientOf(sender);
    const hook = await startReceiver();
    receivers.push(hook);
    const endpoint = await subscriber.post('/webhook-endpoints', { body: { url: hook.url, event_types: ['customer.created'] } });
    const secret = endpoint.secret!;

    const customer = await client.post('/customers', { body: { name: 'Delivered Inc' } });
    const [delivery] = await hook.waitForRequests(1, 20_000);
    const event = verifyWebhook(delivery!.body, delivery!.headers, secret);
    if (!('event_type' in event) || event.event_type !== 'customer.created') throw new Error(`unexpected event ${JSON.stringify(event)}`);
    expect(event.data).toMatchObject({ id: customer.id, name: 'Delivered Inc' });
    expect(event.company_id).toBe(sender.companyId);

    const refusal = (body: string, headers: Record<string, string | string[] | undefined>, secrets: string | string[] = secret) => {
      try {
        verifyWebhook(body, headers, secrets);
      } catch (error) {
        if (error instanceof WebhookVerificationError) return error.code;
        throw error;
      }
      return 'accepted';
    };
    expect(refusal(delivery!.body.replace('Delivered Inc', 'Diverted Inc'), delivery!.headers)).toBe('INVALID_SIGNATURE');
    expect(refusal(delivery!.body, delivery!.headers, 'whsec_someone_else')).toBe('INVALID_SIGNATURE');
    // Signed correctly with the endpoint's secret, but 301 s ago: a replay.
    const old = String(Math.floor(Date.now() / 1000) - 301);
    const oldSignature = createHmac('sha256', secret).update(`${old}.${delivery!.body}`).digest('hex');
    expect(refusal(delivery!.body, { 'x-webhook-timestamp': old, 'x-webhook-signature': oldSignature })).toBe('TIMESTAMP_OUT_OF_TOLERANCE');

    const rotated = await subscriber.post('/webhook-endpoints/{id}/rotate-secret', { params: { path: { id: endpoint.id } }, body: { overlap_seconds: 3600 } });
    await client.post('/customers', { body: { name: 'Rotated Corp' } });
    const [, afterRotation] = await hook.waitForRequests(2, 20_000);
    expect(verifyWebhook(afterRotation!.body, afterRotation!.headers, secret)).toMatchObject({ data: { name: 'Rotated Corp' } });
    expect(verifyWebhook(afterRotation!.body, afterRotation!.headers, rotated.secret!)).toMatchObject({ data: { name: 'Rotated Corp' } });
    expect(refusal(delivery!.body, delivery!.headers, rotated.secret!)).toBe('INVALID_SIGNATURE');

    // The delivery log pages by cursor (pagination.next_after), newest first.
    const logged: string[] = [];
    for await (const entry of subscriber.paginate('/webhook-deliveries', { params: { query: { endpoint_id: endpoint.id, limit: 1 } } })) logged.push(entry.id);
    expect(logged).toEqual([afterRotation!.headers['x-webhook-id'], delivery!.headers['x-webhook-id']]);
  });
});
