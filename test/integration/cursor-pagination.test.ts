import { customers } from '../../src/domain/business/customers';
import { encodeCursor } from '../../src/domain/page';
import { type RestClient, restClient, walkByCursor } from '../helpers/api-client';
import { registerEndpoint } from '../helpers/webhooks';
import { createTenant, issueTestKey, startStack, type TestStack } from '../helpers/stack';

/**
 * Cursor paging beside limit and offset on every list (README, "Every collection works the same way"): `after` = the `pagination.next_cursor`
 * of the page before, null on the last page; the same records in the same order as offset paging, ties on the
 * sort column broken by id, filters combined, the total always that of the whole filtered list.
 */
describe('cursor paging', () => {
  let stack: TestStack;
  let api: RestClient;
  /** Customers oldest first, as offset paging lists them. */
  let listed: { id: string; type: string }[];
  /** The endpoint of the delivery log's tests. */
  let endpointId: string;

  beforeAll(async () => {
    stack = await startStack({ worker: false });
    api = restClient(stack, await createTenant(stack.orm, ['admin']));
    for (let i = 0; i < 12; i++) await api.create('customers', { name: `Cursor ${i}`, type: i % 2 ? 'residential' : 'commercial' });
    // Four instants a microsecond apart (all in one millisecond, finer than a JavaScript Date), three customers
    // on each, given against the id order so that the ties are broken by id, not by when they were made.
    await stack.em().execute(
      `update customers c set created_at = timestamptz '2026-03-01T08:00:00.000100Z' + (n.i / 3) * interval '1 microsecond'
         from (select id, (row_number() over (order by id desc) - 1)::int as i from customers where company_id = ?) n where c.id = n.id`,
      [api.companyId],
    );
    listed = (await api.get('/customers?limit=100')).body.data;
  });
  afterAll(() => stack.close());

  const ids = (records: { id: string }[]) => records.map((r) => r.id);

  it('walks a list with ties on created_at: every record once, in the offset order, for any page size', async () => {
    expect(listed).toHaveLength(12);
    const byCreated = await stack.em().execute<{ id: string }[]>('select id from customers where company_id = ? order by created_at, id', [api.companyId]);
    expect(ids(listed)).toEqual(ids(byCreated));
    for (const limit of [1, 2, 3, 5, 12, 13]) {
      const { pages, records } = await walkByCursor(api, `/customers?limit=${limit}`);
      expect({ limit, ids: ids(records) }).toEqual({ limit, ids: ids(listed) });
      expect(pages).toHaveLength(Math.ceil(12 / limit));
      expect(pages.map((p) => p.pagination)).toEqual(pages.map((_, n) => ({ limit, offset: 0, total: 12, next_cursor: n === pages.length - 1 ? null : expect.any(String) })));
    }
  });

  it('combines with filters, keeping the filtered total', async () => {
    const commercial = listed.filter((c) => c.type === 'commercial');
    expect(commercial).toHaveLength(6);
    const { pages, records } = await walkByCursor(api, '/customers?type=commercial&updated_since=2000-01-01T00:00:00Z&limit=4');
    expect(ids(records)).toEqual(ids(commercial));
    expect(pages.map((p) => p.pagination)).toEqual([
      { limit: 4, offset: 0, total: 6, next_cursor: expect.any(String) },
      { limit: 4, offset: 0, total: 6, next_cursor: null },
    ]);
    // A cursor keeps its place when the filters change: the commercial customers after the third customer.
    const third = (await api.get('/customers?limit=3')).body.pagination.next_cursor;
    const after = await api.get(`/customers?type=commercial&after=${third}`);
    expect(ids(after.body.data)).toEqual(ids(listed.slice(3).filter((c) => c.type === 'commercial')));
    expect(after.body.pagination).toEqual({ limit: 50, offset: 0, total: 6, next_cursor: null });
  });

  it('keeps its place when records before or at it are deleted, and reaches records added since', async () => {
    const other = restClient(stack, await createTenant(stack.orm, ['admin']));
    const made: string[] = [];
    for (let i = 0; i < 6; i++) made.push((await other.create('customers', { name: `Moving ${i}` })).id);
    const first = (await other.get('/customers?limit=3')).body;
    expect(ids(first.data)).toEqual(made.slice(0, 3));
    // The cursor's own record and one before it go; one is added at the end.
    expect((await other.delete(`/customers/${made[2]}`)).status).toBe(204);
    expect((await other.delete(`/customers/${made[0]}`)).status).toBe(204);
    made.push((await other.create('customers', { name: 'Moving 6' })).id);
    const second = (await other.get(`/customers?limit=3&after=${first.pagination.next_cursor}`)).body;
    expect(ids(second.data)).toEqual(made.slice(3, 6));
    expect(second.pagination).toEqual({ limit: 3, offset: 0, total: 5, next_cursor: expect.any(String) });
    const third = (await other.get(`/customers?limit=3&after=${second.pagination.next_cursor}`)).body;
    expect(third).toEqual({ data: [expect.objectContaining({ id: made[6] })], pagination: { limit: 3, offset: 0, total: 5, next_cursor: null } });
  });

  it('answers a cursor past the last record with an empty last page and the whole total', async () => {
    const last = listed.at(-1)!;
    const past = encodeCursor({ list: 'customers.created_at.asc', keys: ['9999-12-31T23:59:59.999999Z', last.id] });
    expect((await api.get(`/customers?after=${past}`)).body).toEqual({ data: [], pagination: { limit: 50, offset: 0, total: 12, next_cursor: null } });
    const filtered = await api.get(`/customers?type=residential&after=${past}`);
    expect(filtered.body).toEqual({ data: [], pagination: { limit: 50, offset: 0, total: 6, next_cursor: null } });
  });

  describe('a newest-first list (the delivery log)', () => {
    let deliveries: string[];

    beforeAll(async () => {
      const { key } = await issueTestKey(stack.orm, api.companyId, ['admin']);
      endpointId = (await registerEndpoint(stack, key, { url: 'https://127.0.0.1:9/cursor', event_types: ['customer.created'] })).id;
      // Nine deliveries, three on each of three instants (microseconds apart), statuses in turn.
      await stack.em().execute(
        `insert into webhook_deliveries (id, company_id, created_at, updated_at, endpoint_id, event_type, payload, status)
         select gen_random_uuid(), ?, timestamptz '2026-03-01T08:00:00.000100Z' + (i / 3) * interval '1 microsecond', now(), ?, 'customer.created', '{}',
                (array['delivered', 'failed', 'pending'])[i % 3 + 1]
           from generate_series(0, 8) i`,
        [api.companyId, endpointId],
      );
      deliveries = ids((await api.get(`/webhook-deliveries?endpoint_id=${endpointId}&limit=100`)).body.data);
    });

    it('walks newest first with ties, and with a filter', async () => {
      const newestFirst = await stack.em().execute<{ id: string }[]>('select id from webhook_deliveries where endpoint_id = ? order by created_at desc, id desc', [endpointId]);
      expect(deliveries).toEqual(ids(newestFirst));
      for (const limit of [1, 2, 4, 9]) {
        const { pages, records } = await walkByCursor(api, `/webhook-deliveries?endpoint_id=${endpointId}&limit=${limit}`);
        expect({ limit, ids: ids(records) }).toEqual({ limit, ids: deliveries });
        expect(pages.map((p) => p.pagination.next_cursor === null)).toEqual(pages.map((_, n) => n === pages.length - 1));
        expect(pages.every((p) => p.pagination.total === 9 && p.pagination.offset === 0)).toBe(true);
      }
      const failed = ids((await api.get(`/webhook-deliveries?endpoint_id=${endpointId}&status=failed`)).body.data);
      expect(failed).toHaveLength(3);
      const { pages, records } = await walkByCursor(api, `/webhook-deliveries?endpoint_id=${endpointId}&status=failed&limit=2`);
      expect(ids(records)).toEqual(failed);
      expect(pages.map((p) => p.pagination.total)).toEqual([3, 3]);
      // Each page also carries the deprecated next_after (the last delivery's id).
      expect(pages.map((p) => p.pagination.next_after)).toEqual([failed[1], null]);
    });

    it("walks an endpoint's attempt log (a list over a join), newest first, with a filter", async () => {
      // Two attempts per delivery, on the delivery's instant: ties across deliveries.
      await stack.em().execute(
        `insert into webhook_delivery_attempts (id, company_id, created_at, updated_at, delivery_id, attempt_number, trigger, outcome, status_code)
         select gen_random_uuid(), d.company_id, d.created_at, now(), d.id, n, 'schedule', 'failed', case when n = 1 then 500 else 404 end
           from webhook_deliveries d, generate_series(1, 2) n where d.endpoint_id = ?`,
        [endpointId],
      );
      const log = `/webhook-endpoints/${endpointId}/attempts`;
      const all = (await api.get(`${log}?limit=100`)).body.data;
      expect(all).toHaveLength(18);
      const { records } = await walkByCursor(api, `${log}?limit=4`);
      expect(records).toEqual(all);
      const fiveHundreds = await walkByCursor(api, `${log}?limit=4&status_code_class=5xx`);
      expect(fiveHundreds.records).toEqual(all.filter((a: any) => a.status_code === 500));
      expect(fiveHundreds.pages.map((p) => p.pagination.total)).toEqual([9, 9, 9]);
    });
  });

  it('walks an alphabetical list (skills) by its text sort', async () => {
    const skills = restClient(stack, await createTenant(stack.orm, ['admin']));
    for (const name of ['Welding', 'carpentry', 'Électricité', 'Asbestos', 'asphalt', 'Zinc roofing', 'drywall']) {
      expect((await skills.post('/skills', { name })).status).toBe(201);
    }
    const alphabetical = (await skills.get('/skills?limit=100')).body.data;
    expect(alphabetical).toHaveLength(7);
    for (const limit of [1, 3]) {
      const { pages, records } = await walkByCursor(skills, `/skills?limit=${limit}`);
      expect(records).toEqual(alphabetical);
      expect(pages.at(-1).pagination.next_cursor).toBeNull();
    }
  });

  it('is on every list: after documented and taken, next_cursor in each response', async () => {
    const document = (await api.get('/openapi.json')).body;
    const lists = Object.entries(document.paths as Record<string, any>)
      .filter(([, item]) => item.get?.responses?.['200']?.content?.['application/json']?.schema?.properties?.pagination)
      .map(([path, item]) => [path.replace(/^\/api\/v1/, ''), item.get] as const);
    expect(lists.length).toBeGreaterThan(20);
    // The only list under a record: an endpoint's attempts.
    expect(lists.filter(([path]) => path.includes('{')).map(([path]) => path)).toEqual(['/webhook-endpoints/{id}/attempts']);
    const pathIds: Record<string, string> = { '{id}': endpointId };
    for (const [path, operation] of lists) {
      expect({ path, after: operation.parameters.some((p: any) => p.name === 'after' && p.in === 'query') }).toEqual({ path, after: true });
      const url = path.replace(/\{id\}/g, () => pathIds['{id}']!);
      const page = await api.get(`${url}?limit=1`);
      expect({ path, status: page.status, next: typeof page.body.pagination?.next_cursor }).toEqual({ path, status: 200, next: expect.stringMatching(/^(string|object)$/) });
      if (page.body.pagination.next_cursor) {
        const next = await api.get(`${url}?limit=1&after=${page.body.pagination.next_cursor}`);
        expect({ path, status: next.status, offset: next.body.pagination?.offset }).toEqual({ path, status: 200, offset: 0 });
      }
      const refused = await api.get(`${url}?after=not-a-cursor`);
      expect({ path, status: refused.status, field: refused.body.error?.details?.field }).toEqual({ path, status: 400, field: 'after' });
    }
  });

  describe('refuses with a 400 naming after', () => {
    let valid: string;
    beforeAll(async () => {
      valid = (await api.get('/customers?limit=2')).body.pagination.next_cursor;
    });

    const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
    const cases: [string, () => string][] = [
      ['characters outside base64url', () => 'not a cursor!'],
      ['base64url that is not JSON', () => b64('customers')],
      ['JSON that is not an object', () => b64([1, 2])],
      ['a missing list', () => b64({ k: ['2026-03-01T08:00:00.000100Z', listed[0]!.id] })],
      ['an unknown member', () => b64({ l: 'customers.created_at.asc', k: ['2026-03-01T08:00:00.000100Z', listed[0]!.id], x: 1 })],
      ['too few keys', () => b64({ l: 'customers.created_at.asc', k: [listed[0]!.id] })],
      ['a sort value that is not an instant', () => b64({ l: 'customers.created_at.asc', k: ['2026-02-30T08:00:00.000000Z', listed[0]!.id] })],
      ['an instant in another form', () => b64({ l: 'customers.created_at.asc', k: ['2026-03-01T08:00:00Z', listed[0]!.id] })],
      ['an id that is not a UUID', () => b64({ l: 'customers.created_at.asc', k: ['2026-03-01T08:00:00.000100Z', "1' or '1'='1"] })],
      ['a null sort value', () => b64({ l: 'customers.created_at.asc', k: [null, listed[0]!.id] })],
      ['the order reversed', () => b64({ l: 'customers.created_at.desc', k: ['2026-03-01T08:00:00.000100Z', listed[0]!.id] })],
      ['a changed last character', () => valid.slice(0, -1) + (valid.endsWith('A') ? 'B' : 'A')],
      ['trailing characters', () => `${valid}AA`],
      ['a cursor too long', () => b64({ l: 'customers.created_at.asc', k: ['x'.repeat(2000), listed[0]!.id] })],
    ];
    it.each(cases)('%s', async (_, cursor) => {
      const response = await api.get(`/customers?after=${encodeURIComponent(cursor())}`);
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ error: { code: 'INVALID_REQUEST', message: expect.stringMatching(/^after /), details: { field: 'after', reason: expect.any(String) } } });
    });

    it.each([
      ['/employees', 'another collection'],
      ['/webhook-deliveries', 'a newest-first list'],
      ['/skills', 'a list in another order'],
      ['/schedules', 'the schedule'],
    ])('a cursor of the customers given to %s (%s)', async (path) => {
      expect((await api.get(`/customers?after=${valid}`)).status).toBe(200);
      const response = await api.get(`${path}?after=${valid}`);
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'after' } });
    });

    it('and naming offset when both are given (offset=0 is the default, allowed)', async () => {
      const both = await api.get(`/customers?offset=2&after=${valid}`);
      expect(both.status).toBe(400);
      expect(both.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'offset' } });
      const zero = await api.get(`/customers?offset=0&after=${valid}`);
      expect(ids(zero.body.data)).toEqual(ids(listed.slice(2)));
      expect((await api.get(`/customers?after=${valid}&after=${valid}`)).status).toBe(400);
    });
  });

  it('reads a deep page of 100,000 by an index range scan: no row before the cursor is read', async () => {
    const tenant = await createTenant(stack.orm, ['admin']);
    await stack.em().execute(
      `insert into customers (id, company_id, created_at, updated_at, name, type)
       select gen_random_uuid(), ?, timestamptz '2026-01-01T00:00:00Z' + (i / 2) * interval '1 millisecond', now(), 'Bulk ' || i, 'commercial'
         from generate_series(1, 100000) i`,
      [tenant.companyId],
    );
    await stack.em().execute('analyze customers');
    // The cursor of the page ending at the 90,000th customer.
    const [deep] = await stack.em().execute<{ id: string; key: string }[]>(
      `select id, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as key from customers where company_id = ? order by created_at, id offset 89999 limit 1`,
      [tenant.companyId],
    );
    const after = { list: 'customers.created_at.asc', keys: [deep!.key, deep!.id] };
    // The statements the list runs, as sent.
    const em = stack.orm.em.fork();
    const platform = em.getPlatform();
    const format = platform.formatQuery.bind(platform);
    const statements: string[] = [];
    platform.formatQuery = (sql, params) => {
      const formatted = format(sql, params);
      if (formatted.startsWith('select "r".*')) statements.push(formatted);
      return formatted;
    };
    try {
      const page = await customers.list(em, tenant.companyId, { limit: 100, offset: 0, after });
      const filtered = await customers.list(em, tenant.companyId, { limit: 100, offset: 0, after }, { type: 'commercial' });
      expect([page.total, filtered.total]).toEqual([100_000, 100_000]);
      expect(page.items.map((c) => c.name)).toEqual(filtered.items.map((c) => c.name));
      expect(page.items).toHaveLength(100);
    } finally {
      platform.formatQuery = format;
    }
    expect(statements).toHaveLength(2);
    for (const [n, statement] of statements.entries()) {
      const [{ 'QUERY PLAN': [plan] }] = await stack.em().execute<{ 'QUERY PLAN': [{ Plan: PlanNode }] }[]>(`explain (analyze, format json) ${statement}`);
      const scans = nodes(plan!.Plan).filter((node) => node['Relation Name'] === 'customers' && node['Index Cond']?.includes('ROW('));
      // The page's ids: a range of the ordering index from the cursor on, 101 rows (one to tell a next page).
      expect({ n, scans: scans.map((s) => [s['Node Type'], s['Index Name'], s['Actual Rows']]) }).toEqual({
        n,
        scans: [[expect.stringMatching(/^Index( Only)? Scan$/), 'customers_company_created_idx', 101]],
      });
      // Nothing else reads more than the page either: the total comes from record_counts, or (filtered) from a
      // count of its own, an InitPlan, left out here.
      const pageNodes = nodes(plan!.Plan, true);
      expect({ n, largest: Math.max(...pageNodes.map((node) => node['Actual Rows'] ?? 0)) }).toEqual({ n, largest: 101 });
    }
  });
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Parent Relationship'?: string;
  'Actual Rows'?: number;
  Plans?: PlanNode[];
}

/** A plan's nodes; without InitPlans (a statement's scalar subqueries, such as its total) when `pageOnly`. */
const nodes = (node: PlanNode, pageOnly = false): PlanNode[] => [
  node,
  ...(node.Plans ?? []).filter((child) => !(pageOnly && child['Parent Relationship'] === 'InitPlan')).flatMap((child) => nodes(child, pageOnly)),
];
