import { historyOf, runsOf } from '../helpers/delivery-runs';
import { startReceiver, type ReceivedRequest, type TestReceiver } from '../helpers/https-receiver';
import { waitFor } from '../helpers/processes';
import { createTenant, request, startStack, type Tenant, testConfig, type TestStack } from '../helpers/stack';
import { deliveryIdsOf, registerEndpoint, verifiedAsReceiver, waitForDeliveryStatus } from '../helpers/webhooks';

/**
 * Issue 63: an endpoint's transformation. Vendors are created through REST; each endpoint has a filter on the vendor's
 * name, so that it gets the one vendor its case creates, and a transformation whose result the receiver checks.
 */
describe('transformations', () => {
  let stack: TestStack;
  let tenant: Tenant;
  let hook: TestReceiver;

  const call = (method: string, path: string, body?: unknown, key = tenant.key) => request(stack.baseUrl, method, `/api/v1${path}`, { key, body });
  const createVendor = async (name: string) => expect((await call('POST', '/vendors', { vendor_name: name, type: 'subcontractor', rating: 4 })).status).toBe(201);
  /** An endpoint for the vendor `name` only, with `transformation`, at `path` of the receiver. */
  const endpointFor = (name: string, transformation: unknown, extra: Record<string, unknown> = {}, url = `${hook.url}?case=${name}`) =>
    registerEndpoint(stack, tenant.key, { url, event_types: ['vendor.created'], api_key_id: null, filter: { path: 'data.vendor_name', eq: name }, transformation, ...extra });
  const requestsOf = (name: string) => hook.requests.filter((made) => made.path.includes(`case=${name}`) || made.headers['x-case'] === name);
  const metricsText = async () => (await fetch(`http://127.0.0.1:${stack.worker!.metricsPort}/metrics`)).text();

  beforeAll(async () => {
    stack = await startStack({ config: await testConfig({ RATE_LIMIT_MULTIPLIER: '100' }) });
    tenant = await createTenant(stack.orm, ['admin']);
    hook = await startReceiver();
  });
  afterAll(async () => {
    await hook.close();
    await stack.close();
  });

  it('sends the transformed body, headers and path, signed over the body sent; authentication headers win', async () => {
    const transformation = {
      body: '{"name": data.vendor_name, "kind": $uppercase(data.type), "source": event_type}',
      headers: { 'X-Case': '"shaped"', 'X-Record': 'data.vendor_name', 'x-api-token': '"spoofed"' },
      path: '"/vendors/" & $lowercase(data.vendor_name) & "?src=ci"',
    };
    const endpoint = await endpointFor('Shaped', transformation, { authentication: { headers: [{ name: 'X-Api-Token', value: 'the-real-token' }] } }, hook.url);
    await createVendor('Shaped');
    const [received] = await waitFor(async () => requestsOf('shaped').length > 0 && requestsOf('shaped'), 30_000, 'the transformed delivery');
    expect(received!.path).toBe('/vendors/shaped?src=ci');
    expect(JSON.parse(received!.body)).toEqual({ name: 'Shaped', kind: 'SUBCONTRACTOR', source: 'vendor.created' });
    expect(received!.headers['x-record']).toBe('Shaped');
    expect(received!.headers['x-api-token']).toBe('the-real-token');
    expect(verifiedAsReceiver(endpoint.secret, received!)).toBe(true);

    const [deliveryId] = await deliveryIdsOf(stack, endpoint.id);
    const delivery = await waitForDeliveryStatus(stack, tenant.key, deliveryId!, ['delivered']);
    expect(delivery.payload).toMatchObject({ event_type: 'vendor.created', data: { vendor_name: 'Shaped' } });
    expect(delivery.request).toEqual({
      body: { name: 'Shaped', kind: 'SUBCONTRACTOR', source: 'vendor.created' },
      headers: { 'X-Case': 'shaped', 'X-Record': 'Shaped', 'x-api-token': 'spoofed' },
      path: '/vendors/shaped?src=ci',
    });
    expect((await call('GET', `/webhook-endpoints/${endpoint.id}`)).body.transformation).toEqual(transformation);
    const metrics = await metricsText();
    expect(metrics).toContain(`webhook_transformations_total{endpoint_id="${endpoint.id}",outcome="succeeded"} 1`);
    expect(metrics).toMatch(/webhook_transformation_duration_seconds_count\{outcome="succeeded"\} [1-9]/);
  });

  it.each([
    ['Throws', { body: '$error("no project code")' }, 'transformation.body no project code'],
    ['Slow', { body: '$sum([1..3000000].($ * 2))' }, 'timed out after 200 ms'],
    ['Empty', { body: 'data.no_such_field' }, 'transformation.body returned no value'],
    ['Elsewhere', { body: 'data', path: '$join(["/", "/evil.example/x"])' }, 'not a relative path'],
  ])('fails the delivery of a transformation that %s once, with its reason, and sends nothing', async (name, transformation, reason) => {
    const endpoint = await endpointFor(name, transformation);
    await createVendor(name);
    await waitFor(async () => (await deliveryIdsOf(stack, endpoint.id)).length === 1, 30_000, 'the delivery');
    const [deliveryId] = await deliveryIdsOf(stack, endpoint.id);
    const delivery = await waitForDeliveryStatus(stack, tenant.key, deliveryId!, ['failed']);
    expect(delivery).toMatchObject({ attempt_count: 1, last_status_code: null, last_error: expect.stringContaining(reason), request: null });
    expect(delivery.attempts).toEqual([expect.objectContaining({ status_code: null, error: expect.stringContaining(reason) })]);
    expect(requestsOf(name)).toEqual([]);

    const alerts = await call('GET', '/webhook-alerts?status=open');
    expect(alerts.body.data).toContainEqual(expect.objectContaining({ kind: 'delivery_failed', delivery_id: deliveryId, message: expect.stringContaining(reason) }));
    const [operational] = await stack.em().execute<{ data: { last_error: string } }[]>(
      `select data from outbox_events where company_id = ? and event_type = 'delivery.failed' and data->>'delivery_id' = ?`,
      [tenant.companyId, deliveryId],
    );
    expect(operational!.data.last_error).toContain(reason);
    // The Temporal UI: the failed run's attempt (its first task's local activity) and the run itself say why.
    const failedRun = await waitFor(async () => (await runsOf(stack, deliveryId!)).find((run) => run.status === 'FAILED'), 30_000, 'the failed run');
    const events = await historyOf(stack, deliveryId!, failedRun.runId);
    const attemptFailure = events.map((event) => event.markerRecordedEventAttributes?.failure ?? event.activityTaskFailedEventAttributes?.failure).find(Boolean);
    expect(attemptFailure?.message).toContain(reason);
    expect(events.at(-1)?.workflowExecutionFailedEventAttributes?.failure?.message).toContain(reason);

    // Failed for good: no retry follows.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const [{ n }] = await stack.em().execute<{ n: number }[]>('select count(*)::int as n from webhook_delivery_attempts where delivery_id = ?', [deliveryId]);
    expect(n).toBe(1);
    expect(await metricsText()).toContain(`webhook_transformations_total{endpoint_id="${endpoint.id}",outcome="failed"} 1`);
  });

  it.each([
    ['a body that does not parse', { body: '{ "a": data.x, }' }, 'transformation.body', 'position'],
    ['a reserved header', { body: 'data', headers: { 'X-Webhook-Signature': '"x"' } }, 'transformation.headers.X-Webhook-Signature', 'reserved'],
    ['Content-Type as a header', { body: 'data', headers: { 'content-type': '"text/plain"' } }, 'transformation.headers.content-type', 'reserved'],
    ['a header expression that does not parse', { body: 'data', headers: { 'X-Name': 'data.(' } }, 'transformation.headers.X-Name', 'does not parse'],
    ['a path to another host', { body: 'data', path: '"//evil.example/x"' }, 'transformation.path', 'relative path'],
    ['a path with a scheme', { body: 'data', path: '"http://other/x"' }, 'transformation.path', 'relative path'],
    ['a path without its leading slash', { body: 'data', path: '"projects/" & data.project_code' }, 'transformation.path', 'relative path'],
  ])('refuses %s with a 400 naming the field, on registration and on update', async (_, transformation, field, reason) => {
    const registered = await call('POST', '/webhook-endpoints', { url: hook.url, event_types: ['vendor.deleted'], transformation });
    expect(registered.status).toBe(400);
    expect(registered.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field, reason: expect.stringContaining(reason) } });
    const endpoint = await registerEndpoint(stack, tenant.key, { url: hook.url, event_types: ['vendor.deleted'] });
    const updated = await call('PUT', `/webhook-endpoints/${endpoint.id}`, { transformation });
    expect(updated.status).toBe(400);
    expect(updated.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field, reason: expect.stringContaining(reason) } });
  });

  it("refuses headers and path on a feed, takes body, and writes the feed's entries transformed", async () => {
    for (const extra of [{ headers: { 'X-A': '"a"' } }, { path: '"/a"' }]) {
      const refused = await call('POST', '/webhook-endpoints', { delivery: 'feed', event_types: ['vendor.created'], transformation: { body: 'data', ...extra } });
      expect(refused.status).toBe(400);
      expect(refused.body.error.details.field).toBe(`transformation.${Object.keys(extra)[0]}`);
    }
    const feed = await registerEndpoint(stack, tenant.key, {
      delivery: 'feed', event_types: ['vendor.created'], api_key_id: null, filter: { path: 'data.vendor_name', in: ['Fed', 'Unfed'] },
      transformation: { body: 'data.vendor_name = "Fed" ? {"vendor": data.vendor_name, "rating": data.rating} : $error("not this one")' },
    });
    await createVendor('Fed');
    await createVendor('Unfed');
    const page = await waitFor(async () => {
      const read = await call('GET', `/webhook-endpoints/${feed.id}/feed?limit=10`);
      return read.body.data.length === 2 && read.body;
    }, 30_000, 'both entries in the feed');
    expect(page.data[0].body).toEqual({ vendor: 'Fed', rating: 4 });
    expect(page.data[1].body).toMatchObject({ transformation_error: { field: 'transformation.body', message: 'not this one' }, event_type: 'vendor.created' });
  });

  describe('POST /webhook-endpoints/{id}/test-transformation', () => {
    let endpointId: string;
    beforeAll(async () => {
      endpointId = (await endpointFor('Tried', { body: '{"vendor": data.vendor_name}', headers: { 'X-Kind': 'data.type' }, path: '"/v/" & data.vendor_name' })).id;
      await createVendor('Tried');
    });

    it('runs the saved transformation on a body given, and answers what would be sent', async () => {
      const event = { event_type: 'vendor.created', data: { vendor_name: 'Given', type: 'supplier' } };
      const response = await call('POST', `/webhook-endpoints/${endpointId}/test-transformation`, { event });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ body: { vendor: 'Given' }, headers: { 'X-Kind': 'supplier' }, url: expect.stringMatching(/^https:\/\/localhost:\d+\/v\/Given$/), error: null, event });
    });

    it("runs it on the company's most recent event of a type", async () => {
      await waitFor(async () => (await stack.em().execute(`select count(*)::int as n from outbox_events where company_id = ? and dispatched_at is null`, [tenant.companyId]))[0].n === 0, 15_000, 'the outbox dispatched');
      const response = await call('POST', `/webhook-endpoints/${endpointId}/test-transformation`, { event_type: 'vendor.created' });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ body: { vendor: expect.any(String) }, error: null, event: { event_type: 'vendor.created', company_id: tenant.companyId } });
    });

    it('tries an unsaved transformation, and answers its evaluation error with its position', async () => {
      const event = { event_type: 'vendor.created', data: { vendor_name: 'Given' } };
      const tried = await call('POST', `/webhook-endpoints/${endpointId}/test-transformation`, { event, transformation: { body: '{"who": $uppercase(data.vendor_name)}' } });
      expect(tried.body).toMatchObject({ body: { who: 'GIVEN' }, headers: {}, error: null });
      const failing = await call('POST', `/webhook-endpoints/${endpointId}/test-transformation`, { event, transformation: { body: '{"n": data.vendor_name + 1}' } });
      expect(failing.status).toBe(200);
      expect(failing.body).toMatchObject({ body: null, url: null, error: { field: 'transformation.body', message: expect.any(String), position: expect.any(Number) } });
      const unparsable = await call('POST', `/webhook-endpoints/${endpointId}/test-transformation`, { event, transformation: { body: '{' } });
      expect(unparsable.status).toBe(400);
      expect(unparsable.body.error.details.field).toBe('transformation.body');
    });

    it("is a 404 to another company's key", async () => {
      const other = await createTenant(stack.orm, ['admin']);
      const response = await call('POST', `/webhook-endpoints/${endpointId}/test-transformation`, { event: { data: {} } }, other.key);
      expect(response.status).toBe(404);
    });
  });

  it('re-runs a delivery with the transformation saved at the time of the re-run', async () => {
    const own = await startReceiver();
    try {
      own.respondWith((_request: ReceivedRequest, index: number) => (index === 0 ? { status: 400, body: 'not yet' } : { status: 200, body: '{}' }));
      const endpoint = await endpointFor('Rerun', { body: '{"version": 1, "name": data.vendor_name}' }, {}, own.url);
      await createVendor('Rerun');
      await waitFor(async () => (await deliveryIdsOf(stack, endpoint.id)).length === 1, 30_000, 'the delivery');
      const [deliveryId] = await deliveryIdsOf(stack, endpoint.id);
      const failed = await waitForDeliveryStatus(stack, tenant.key, deliveryId!, ['failed']);
      expect(failed.request.body).toEqual({ version: 1, name: 'Rerun' });

      expect((await call('PUT', `/webhook-endpoints/${endpoint.id}`, { transformation: { body: '{"version": 2, "name": data.vendor_name}', headers: { 'X-Version': '"2"' } } })).status).toBe(200);
      const retried = await call('POST', `/webhook-deliveries/${deliveryId}/retry`, { reason: 'transformation fixed' });
      expect(retried.status).toBe(200);
      expect(retried.body).toMatchObject({ status: 'delivered', request: { body: { version: 2, name: 'Rerun' }, headers: { 'X-Version': '2' } } });
      expect(own.requests.map((made) => JSON.parse(made.body))).toEqual([{ version: 1, name: 'Rerun' }, { version: 2, name: 'Rerun' }]);
      expect(own.requests[1]!.headers['x-version']).toBe('2');
      expect(verifiedAsReceiver(endpoint.secret, own.requests[1]!)).toBe(true);
    } finally {
      await own.close();
    }
  });
});
