import { startReceiver, type TestReceiver } from '../helpers/https-receiver';
import { waitFor } from '../helpers/processes';
import { createTenant, request, startStack, type Tenant, testConfig, type TestStack } from '../helpers/stack';
import { registerEndpoint } from '../helpers/webhooks';

/**
 * Issue 47: an endpoint's content filter. Three vendors are created through REST; endpoints with one filter each (all
 * to one receiver, told apart by their query string) must be sent exactly the vendors their filter matches, and no
 * delivery is made of the others.
 */
describe('endpoint filters', () => {
  let stack: TestStack;
  let tenant: Tenant;
  let hook: TestReceiver;

  const call = (method: string, path: string, body?: unknown) => request(stack.baseUrl, method, `/api/v1${path}`, { key: tenant.key, body });

  beforeAll(async () => {
    stack = await startStack({ config: await testConfig({ RATE_LIMIT_MULTIPLIER: '100' }) });
    tenant = await createTenant(stack.orm, ['admin']);
    hook = await startReceiver();
  });
  afterAll(async () => {
    await hook.close();
    await stack.close();
  });

  const VENDORS = [
    { vendor_name: 'Apex', type: 'subcontractor', rating: 4.5, insurance_expiry_date: '2026-12-31', primary_contact_email: 'priya@apex.example.com', certifications: ['COR', 'ESA'] },
    { vendor_name: 'Birch', type: 'supplier', rating: 3, insurance_expiry_date: '2027-06-30' },
    { vendor_name: 'Cobalt', type: 'consultant', rating: 5, insurance_expiry_date: '2026-01-15', primary_contact_email: 'li@cobalt.example.com' },
  ];

  /** Each filter (a name, the filter, the endpoint's shape) and the vendors it lets through. */
  const CASES: [string, unknown, 'A' | 'B', string[]][] = [
    ['eq', { path: 'data.type', eq: 'supplier' }, 'A', ['Birch']],
    ['ne', { path: 'data.type', ne: 'supplier' }, 'A', ['Apex', 'Cobalt']],
    ['in', { path: 'data.vendor_name', in: ['Apex', 'Cobalt', 'Nobody'] }, 'A', ['Apex', 'Cobalt']],
    ['nin', { path: 'data.vendor_name', nin: ['Apex', 'Cobalt'] }, 'A', ['Birch']],
    ['gt-number', { path: 'data.rating', gt: 4.5 }, 'A', ['Cobalt']],
    ['gte-number', { path: 'data.rating', gte: 4.5 }, 'A', ['Apex', 'Cobalt']],
    ['lt-number', { path: 'data.rating', lt: 4.5 }, 'A', ['Birch']],
    ['lte-number', { path: 'data.rating', lte: 3 }, 'A', ['Birch']],
    ['gt-date', { path: 'data.insurance_expiry_date', gt: '2026-12-31' }, 'A', ['Birch']],
    ['lte-date', { path: 'data.insurance_expiry_date', lte: '2026-12-31' }, 'A', ['Apex', 'Cobalt']],
    ['lt-timestamp', { path: 'data.insurance_expiry_date', lt: '2026-06-01T00:00:00Z' }, 'A', ['Cobalt']],
    ['exists', { path: 'data.primary_contact_email', exists: true }, 'A', ['Apex', 'Cobalt']],
    ['exists-false', { path: 'data.primary_contact_email', exists: false }, 'A', ['Birch']],
    ['array-index', { path: 'data.certifications.0', eq: 'COR' }, 'A', ['Apex']],
    ['and-not', { and: [{ path: 'data.rating', gte: 3 }, { not: { path: 'data.type', eq: 'consultant' } }] }, 'A', ['Apex', 'Birch']],
    ['or', { or: [{ path: 'data.type', eq: 'supplier' }, { path: 'data.rating', gt: 4.9 }] }, 'A', ['Birch', 'Cobalt']],
    ['envelope', { path: 'event_type', eq: 'vendor.created' }, 'A', ['Apex', 'Birch', 'Cobalt']],
    ['shape-b', { and: [{ path: 'event', eq: 'vendor.created' }, { path: 'data.rating', gte: 4.5 }] }, 'B', ['Apex', 'Cobalt']],
    ['nothing', { path: 'data.type', eq: 'no-such-type' }, 'A', []],
  ];

  it('sends each endpoint exactly the events its filter matches, makes no delivery of the others, and counts them', async () => {
    const endpoints = new Map<string, string>();
    for (const [name, filter, shape] of CASES) {
      // api_key_id null: the vendors are created with the same key, and an endpoint of that key would not get them.
      const endpoint = await registerEndpoint(stack, tenant.key, { url: `${hook.url}?case=${name}`, event_types: ['vendor.created'], payload_shape: shape, api_key_id: null, filter });
      endpoints.set(name, endpoint.id);
    }
    const unfiltered = await registerEndpoint(stack, tenant.key, { url: `${hook.url}?case=unfiltered`, event_types: ['vendor.created'], api_key_id: null });
    for (const vendor of VENDORS) expect((await call('POST', '/vendors', vendor)).status).toBe(201);

    const expected = CASES.reduce((sum, [, , , names]) => sum + names.length, 0) + VENDORS.length;
    await hook.waitForRequests(expected, 30_000);
    // Every event is dispatched (so every filter has been asked) before what arrived is compared.
    await waitFor(async () => (await stack.em().execute(`select count(*)::int as n from outbox_events where company_id = ? and dispatched_at is null`, [tenant.companyId]))[0].n === 0, 10_000, 'the outbox dispatched');
    const received = new Map<string, string[]>();
    for (const requestMade of hook.requests) {
      const name = new URL(requestMade.path, 'https://localhost').searchParams.get('case')!;
      received.set(name, [...(received.get(name) ?? []), (JSON.parse(requestMade.body) as { data: { vendor_name: string } }).data.vendor_name].sort());
    }
    for (const [name, , , names] of CASES) expect({ name, received: received.get(name) ?? [] }).toEqual({ name, received: names });
    expect(received.get('unfiltered')).toEqual(['Apex', 'Birch', 'Cobalt']);

    for (const [name, , , names] of CASES) {
      const [{ n }] = await stack.em().execute<{ n: number }[]>('select count(*)::int as n from webhook_deliveries where endpoint_id = ?', [endpoints.get(name)]);
      expect({ name, deliveries: n }).toEqual({ name, deliveries: names.length });
    }
    expect((await call('GET', `/webhook-deliveries?endpoint_id=${unfiltered.id}`)).body.data).toHaveLength(3);

    const metrics = await (await fetch(`http://127.0.0.1:${stack.worker!.metricsPort}/metrics`)).text();
    expect(metrics).toContain(`webhook_events_filtered_out_total{endpoint_id="${endpoints.get('nothing')}"} 3`);
    expect(metrics).toContain(`webhook_events_filtered_out_total{endpoint_id="${endpoints.get('eq')}"} 2`);
    expect(metrics).not.toContain(`endpoint_id="${endpoints.get('envelope')}"`);
  });

  it('shows, changes and removes a filter, and a changed filter applies to the next events', async () => {
    const filter = { path: 'data.type', eq: 'supplier' };
    const created = await registerEndpoint(stack, tenant.key, { url: `${hook.url}?case=changed`, event_types: ['vendor.created'], api_key_id: null, filter });
    expect((await call('GET', `/webhook-endpoints/${created.id}`)).body.filter).toEqual(filter);

    const changed = await call('PUT', `/webhook-endpoints/${created.id}`, { filter: { path: 'data.type', eq: 'consultant' } });
    expect(changed.status).toBe(200);
    expect(changed.body.filter).toEqual({ path: 'data.type', eq: 'consultant' });
    const before = hook.requests.length;
    expect((await call('POST', '/vendors', { vendor_name: 'Dune', type: 'consultant' })).status).toBe(201);
    expect((await call('POST', '/vendors', { vendor_name: 'Elm', type: 'supplier' })).status).toBe(201);
    await waitFor(async () => hook.requests.slice(before).some((r) => r.path.includes('case=changed')), 15_000, 'the changed filter to let Dune through');
    await waitFor(async () => (await stack.em().execute(`select count(*)::int as n from outbox_events where company_id = ? and dispatched_at is null`, [tenant.companyId]))[0].n === 0, 10_000, 'the outbox dispatched');
    const names = hook.requests.slice(before).filter((r) => r.path.includes('case=changed')).map((r) => (JSON.parse(r.body) as { data: { vendor_name: string } }).data.vendor_name);
    expect(names).toEqual(['Dune']);

    const removed = await call('PUT', `/webhook-endpoints/${created.id}`, { filter: null });
    expect(removed.status).toBe(200);
    expect(removed.body.filter).toBeNull();
  });

  it.each([
    ['an unknown operator', { path: 'data.rating', between: [1, 2] }, 'filter.between', 'is not a recognised field'],
    ['a malformed path', { path: 'data..rating', eq: 1 }, 'filter.path', 'dotted path'],
    ['a path starting with a digit', { path: '0.data', eq: 1 }, 'filter.path', 'dotted path'],
    ['a comparison with a boolean', { path: 'data.rating', gt: true }, 'filter.gt', 'must be of type'],
    ['a comparison with a text that is not a date', { path: 'data.rating', gte: 'soon' }, 'filter.gte', 'date'],
    ['a comparison with an impossible date', { path: 'data.start_date', lt: '2026-02-30' }, 'filter.lt', 'date'],
    ['in with a single value', { path: 'data.type', in: 'supplier' }, 'filter.in', 'must be of type array'],
    ['in with an object in its list', { path: 'data.type', in: [{ a: 1 }] }, 'filter.in[0]', 'must be of type'],
    ['exists with a text', { path: 'data.type', exists: 'yes' }, 'filter.exists', 'boolean'],
    ['two operators', { path: 'data.type', eq: 'a', ne: 'b' }, 'filter', 'exactly one'],
    ['an operator without a path', { eq: 'a' }, 'filter.path', 'required'],
    ['a path without an operator', { path: 'data.type' }, 'filter', 'exactly one'],
    ['a path beside and', { path: 'data.type', and: [{ path: 'data.type', eq: 'a' }] }, 'filter.path', 'not allowed'],
    ['an empty and', { and: [] }, 'filter.and', 'at least 1'],
    ['an empty filter', {}, 'filter', 'at least 1'],
    ['a bad value deep inside', { or: [{ path: 'data.type', eq: 'a' }, { not: { path: 'data.rating', lte: [] } }] }, 'filter.or[1].not.lte', 'must be of type'],
    ['a bad operator deep inside', { and: [{ path: 'data.type', eq: 'a' }, { path: 'data.rating', like: 'x' }] }, 'filter.and[1].like', 'is not a recognised field'],
    ['a filter nested too deep', { not: { not: { not: { not: { not: { not: { path: 'data.type', eq: 'a' } } } } } } }, 'filter.not.not.not.not.not.not', 'deeper'],
    ['too many conditions', { or: Array.from({ length: 50 }, () => ({ and: [{ path: 'data.a', eq: 1 }, { path: 'data.b', eq: 2 }] })) }, 'filter', 'at most 50'],
  ])('refuses %s with a 400 naming the field, on registration and on update', async (_, filter, field, reason) => {
    const registered = await call('POST', '/webhook-endpoints', { url: hook.url, event_types: ['*'], filter });
    expect(registered.status).toBe(400);
    expect(registered.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field, reason: expect.stringContaining(reason) } });
    const endpoint = await registerEndpoint(stack, tenant.key, { url: hook.url, event_types: ['vendor.deleted'] });
    const updated = await call('PUT', `/webhook-endpoints/${endpoint.id}`, { filter });
    expect(updated.status).toBe(400);
    expect(updated.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field, reason: expect.stringContaining(reason) } });
  });

  describe('POST /webhook-endpoints/{id}/test-filter', () => {
    let endpointId: string;
    beforeAll(async () => {
      endpointId = (await registerEndpoint(stack, tenant.key, { url: hook.url, event_types: ['vendor.*'], filter: { path: 'data.rating', gte: 4 } })).id;
    });

    it('says whether a given body matches the endpoint filter, or a filter given to try', async () => {
      const event = { event_type: 'vendor.created', data: { rating: 4.5 } };
      expect((await call('POST', `/webhook-endpoints/${endpointId}/test-filter`, { event })).body).toEqual({ matches: true, filter: { path: 'data.rating', gte: 4 }, event });
      const lower = { event_type: 'vendor.created', data: { rating: 2 } };
      expect((await call('POST', `/webhook-endpoints/${endpointId}/test-filter`, { event: lower })).body.matches).toBe(false);
      const tried = await call('POST', `/webhook-endpoints/${endpointId}/test-filter`, { event: lower, filter: { path: 'data.rating', lt: 3 } });
      expect(tried.body).toMatchObject({ matches: true, filter: { path: 'data.rating', lt: 3 } });
    });

    it("tests the company's most recent event of a type, in the endpoint's shape", async () => {
      const response = await call('POST', `/webhook-endpoints/${endpointId}/test-filter`, { event_type: 'vendor.created' });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ matches: false, event: { event_type: 'vendor.created', company_id: tenant.companyId, data: { vendor_name: 'Elm' } } });
      const passing = await call('POST', `/webhook-endpoints/${endpointId}/test-filter`, { event_type: 'vendor.created', filter: { path: 'data.vendor_name', eq: 'Elm' } });
      expect(passing.body.matches).toBe(true);
    });

    it.each([
      ['neither a body nor an event type', 400, {}, 'event'],
      ['both', 400, { event: {}, event_type: 'vendor.created' }, 'event'],
      ['an unknown event type', 400, { event_type: 'vendor.exploded' }, 'event_type'],
      ['an event type the company has none of yet', 404, { event_type: 'po.approved' }, 'event_type'],
      ['a bad filter', 400, { event: {}, filter: { path: 'data', near: 1 } }, 'filter.near'],
    ])('answers %s with a %i naming the field', async (_, status, body, field) => {
      const response = await call('POST', `/webhook-endpoints/${endpointId}/test-filter`, body);
      expect(response.status).toBe(status);
      expect(response.body.error.details.field).toBe(field);
    });
  });
});
