import { type RestClient, restClient, walkByCursor } from '../helpers/api-client';
import { schemaViolation } from '../helpers/event-contract';
import { seedEmployee } from '../helpers/fixtures';
import { createTenant, issueTestKey, request, startStack, type Tenant, type TestStack } from '../helpers/stack';

/** GET /schedules: the dispatcher's calendar (README "Schedules"). */
describe('REST /schedules', () => {
  let stack: TestStack;
  let tenant: Tenant;
  let api: RestClient;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    stack = await startStack();
    tenant = await createTenant(stack.orm, ['admin']);
    api = restClient(stack, tenant);
    ids.lead = await seedEmployee(stack, tenant, { empNumber: 'L-1', name: 'Lia Lead' });
    ids.ana = await seedEmployee(stack, tenant, { empNumber: 'C-1', name: 'Ana Crew' });
    ids.ben = await seedEmployee(stack, tenant, { empNumber: 'C-2', name: 'Ben Crew' });
    const customer = await api.create('customers', { name: 'Calendar Co' });
    const tower = await api.create('locations', {
      customer_id: customer.id,
      name: 'Tower site',
      address_line_1: '1 Main St',
      city: 'Calgary',
      province: 'AB',
      coordinates: { latitude: 51.05, longitude: -114.07 },
    });
    const yard = await api.create('locations', { customer_id: customer.id, name: 'Yard' });
    ids.tower = (await api.post('/projects', { project_code: 'CAL-1', name: 'Tower', customer_id: customer.id, location_id: tower.id })).body.id;
    ids.yard = (await api.post('/projects', { project_code: 'CAL-2', name: 'Yard', customer_id: customer.id, location_id: yard.id })).body.id;
    const order = async (name: string, body: Record<string, unknown>) => {
      ids[name] = (await api.create('work-orders', { title: name, work_order_number: name, ...body })).id;
    };
    await order('W-MAY-4', { project_id: ids.tower, start_date: '2026-05-04', end_date: '2026-05-06', start_time: '07:00', end_time: '15:30', site_lead_id: ids.lead, assigned_to: [ids.ben, ids.lead, ids.ana] });
    await order('W-MAY-4-EARLY', { project_id: ids.yard, start_date: '2026-05-04', start_time: '06:00', assigned_to: [ids.ana] });
    await order('W-MAY-1', { project_id: ids.yard, start_date: '2026-05-01', status: 'on_hold' });
    await order('W-JUN-1', { project_id: ids.tower, start_date: '2026-06-01', end_date: '2026-06-30', assigned_to: [ids.ben] });
    // Not on the calendar: no start date.
    await order('W-UNDATED', { project_id: ids.tower, assigned_to: [ids.ana] });
  });
  afterAll(() => stack.close());

  const numbers = (response: { body: { data: { work_order_number: string }[] } }) => response.body.data.map((e) => e.work_order_number);

  it('lists one entry per dated work order, by start, with its place and crew', async () => {
    const response = await api.get('/schedules');
    expect(response.status).toBe(200);
    expect(numbers(response)).toEqual(['W-MAY-1', 'W-MAY-4-EARLY', 'W-MAY-4', 'W-JUN-1']);
    expect(response.body.pagination).toEqual({ limit: 50, offset: 0, total: 4, next_cursor: null });
    for (const entry of response.body.data) expect(schemaViolation('rest/schedules.json#/$defs/entry', entry)).toBeNull();
    expect(response.body.data[2]).toEqual({
      work_order_id: ids['W-MAY-4'],
      work_order_number: 'W-MAY-4',
      title: 'W-MAY-4',
      status: 'scheduled',
      priority: 'normal',
      all_day: false,
      starts_at: '2026-05-04T07:00:00.000Z',
      ends_at: '2026-05-06T15:30:00.000Z',
      start_date: '2026-05-04',
      end_date: '2026-05-06',
      start_time: '07:00',
      end_time: '15:30',
      project: { id: ids.tower, project_code: 'CAL-1', name: 'Tower' },
      location: { id: expect.any(String), name: 'Tower site', address: '1 Main St, Calgary, AB', coordinates: { latitude: 51.05, longitude: -114.07 } },
      // The site lead first, then the crew in its order, each once.
      crew: [
        { employee_id: ids.lead, emp_number: 'L-1', name: 'Lia Lead', role: 'site_lead' },
        { employee_id: ids.ben, emp_number: 'C-2', name: 'Ben Crew', role: 'crew_member' },
        { employee_id: ids.ana, emp_number: 'C-1', name: 'Ana Crew', role: 'crew_member' },
      ],
    });
    expect(response.body.data[0]).toMatchObject({ all_day: true, starts_at: '2026-05-01T00:00:00.000Z', ends_at: null, crew: [], location: { name: 'Yard', address: null } });
  });

  it.each([
    ['from=2026-05-05', ['W-MAY-4', 'W-JUN-1']],
    ['to=2026-05-03', ['W-MAY-1']],
    ['from=2026-05-02&to=2026-05-31', ['W-MAY-4-EARLY', 'W-MAY-4']],
    ['from=2026-06-15&to=2026-06-15', ['W-JUN-1']],
    ['from=2026-07-01', []],
  ])('keeps the entries that overlap the range ?%s', async (query, expected) => {
    const response = await api.get(`/schedules?${query}`);
    expect(response.status).toBe(200);
    expect(numbers(response)).toEqual(expected);
    expect(response.body.pagination.total).toBe(expected.length);
  });

  it('filters by employee (site lead or crew), project and status', async () => {
    expect(numbers(await api.get(`/schedules?employee_id=${ids.lead}`))).toEqual(['W-MAY-4']);
    expect(numbers(await api.get(`/schedules?employee_id=${ids.ana}`))).toEqual(['W-MAY-4-EARLY', 'W-MAY-4']);
    expect(numbers(await api.get(`/schedules?project_id=${ids.yard}`))).toEqual(['W-MAY-1', 'W-MAY-4-EARLY']);
    expect(numbers(await api.get('/schedules?status=on_hold'))).toEqual(['W-MAY-1']);
    expect(numbers(await api.get(`/schedules?employee_id=${ids.ben}&from=2026-06-01&project_id=${ids.tower}`))).toEqual(['W-JUN-1']);
  });

  it('pages with limit and offset, keeping the total', async () => {
    const second = await api.get('/schedules?limit=2&offset=2');
    expect(numbers(second)).toEqual(['W-MAY-4', 'W-JUN-1']);
    expect(second.body.pagination).toEqual({ limit: 2, offset: 2, total: 4, next_cursor: null });
    expect((await api.get('/schedules?offset=10')).body).toEqual({ data: [], pagination: { limit: 50, offset: 10, total: 4, next_cursor: null } });
  });

  it('pages by cursor in its own order, with filters, keeping the total', async () => {
    const all = (await api.get('/schedules')).body.data;
    const { pages, records } = await walkByCursor(api, '/schedules?limit=1');
    expect(records).toEqual(all);
    expect(pages.map((p) => p.pagination)).toEqual([1, 2, 3, 4].map((n) => ({ limit: 1, offset: 0, total: 4, next_cursor: n === 4 ? null : expect.any(String) })));
    const filtered = await walkByCursor(api, `/schedules?limit=1&from=2026-05-02&project_id=${ids.tower}`);
    expect(filtered.records.map((e) => e.work_order_number)).toEqual(['W-MAY-4', 'W-JUN-1']);
    expect(filtered.pages.map((p) => p.pagination.total)).toEqual([2, 2]);
    // Same day, the earlier start first: the cursor carries the start time (none, on W-MAY-1's page, above).
    const mayFourth = await walkByCursor(api, '/schedules?limit=1&from=2026-05-04&to=2026-05-04');
    expect(mayFourth.records.map((e) => e.work_order_number)).toEqual(['W-MAY-4-EARLY', 'W-MAY-4']);
    // A cursor of another list is refused, even of the same table in another order.
    const workOrders = (await api.get('/work-orders?limit=1')).body.pagination.next_cursor;
    expect(workOrders).toEqual(expect.any(String));
    const refused = await api.get(`/schedules?after=${workOrders}`);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'after' } });
  });

  it('follows changes to the work orders it shows', async () => {
    await api.put(`/work-orders/${ids['W-UNDATED']}`, { start_date: '2026-07-10' });
    expect(numbers(await api.get('/schedules?from=2026-07-01'))).toEqual(['W-UNDATED']);
    await api.put(`/work-orders/${ids['W-UNDATED']}`, { start_date: null });
    expect(numbers(await api.get('/schedules?from=2026-07-01'))).toEqual([]);
  });

  it.each([
    ['from=2026-02-30', 'from'],
    ['to=tomorrow', 'to'],
    ['employee_id=42', 'employee_id'],
    ['project_id=x', 'project_id'],
    ['status=done', 'status'],
    ['updated_since=2026-01-01T00:00:00Z', 'updated_since'],
    ['limit=0', 'limit'],
  ])('answers 400 naming the parameter to ?%s', async (query, field) => {
    const response = await api.get(`/schedules?${query}`);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field } });
  });

  it('is read only and needs schedules:read', async () => {
    const post = await api.post('/schedules', { work_order_id: ids['W-MAY-1'] });
    expect(post.status).toBe(405);
    const writer = await issueTestKey(stack.orm, tenant.companyId, ['work-orders:read']);
    const forbidden = await request(stack.baseUrl, 'GET', '/api/v1/schedules', { key: writer.key });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error).toMatchObject({ code: 'FORBIDDEN', details: { reason: 'missing scope schedules:read' } });
    const reader = await issueTestKey(stack.orm, tenant.companyId, ['schedules:read']);
    expect((await request(stack.baseUrl, 'GET', '/api/v1/schedules', { key: reader.key })).status).toBe(200);
  });

  it("shows no other company's work orders", async () => {
    const other = restClient(stack, await createTenant(stack.orm, ['admin']));
    expect((await other.get('/schedules')).body).toEqual({ data: [], pagination: { limit: 50, offset: 0, total: 0, next_cursor: null } });
  });
});
