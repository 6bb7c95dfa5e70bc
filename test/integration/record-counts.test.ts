import { COUNTED_TABLES, compactRecordCounts } from '../../src/domain/record-counts';
import { createTenant, request, startStack, type Tenant, type TestStack } from '../helpers/stack';

/** Exact list totals kept by triggers in record_counts instead of counting a company's rows on every list. */
describe('record counts', () => {
  let stack: TestStack;
  let tenant: Tenant;

  beforeAll(async () => {
    stack = await startStack({ worker: false });
    tenant = await createTenant(stack.orm, ['admin']);
  });
  afterAll(() => stack.close());

  const countRows = async (companyId: string) =>
    (await stack.em().execute<{ n: number }[]>('select count(*)::int as n from customers where company_id = ?', [companyId]))[0]!.n;
  const total = async (key: string, offset = 0) => (await request(stack.baseUrl, 'GET', `/api/v1/customers?limit=2&offset=${offset}`, { key })).body.pagination.total;

  it('are kept for exactly the tables the code reads them for', async () => {
    const rows = await stack.em().execute<{ table_name: string }[]>(
      `select c.relname as table_name from pg_trigger t join pg_class c on c.oid = t.tgrelid
        where t.tgname like '%\\_count\\_inserts' or t.tgname like '%\\_count\\_deletes' group by c.relname having count(*) = 2`,
    );
    expect(rows.map((r) => r.table_name).sort()).toEqual([...COUNTED_TABLES].sort());
  });

  it('give the exact total through concurrent creates, deletes and compaction', async () => {
    const created = await Promise.all(
      Array.from({ length: 12 }, (_, i) => request(stack.baseUrl, 'POST', '/api/v1/customers', { key: tenant.key, body: { name: `Counted ${i}` } })),
    );
    expect(created.every((r) => r.status === 201)).toBe(true);
    await Promise.all(created.slice(0, 5).map((r) => request(stack.baseUrl, 'DELETE', `/api/v1/customers/${r.body.id}`, { key: tenant.key })));
    expect(await total(tenant.key)).toBe(7);
    expect(await countRows(tenant.companyId)).toBe(7);
    // Past the end the total is still exact.
    expect(await total(tenant.key, 50)).toBe(7);

    await compactRecordCounts(stack.em(), 1000);
    const rows = await stack.em().execute('select n from record_counts where company_id = ? and table_name = ?', [tenant.companyId, 'customers']);
    expect(rows).toEqual([{ n: '7' }]);
    expect(await total(tenant.key)).toBe(7);
  });

  it('drop a company pair that counts nothing when compacted', async () => {
    const other = await createTenant(stack.orm, ['admin']);
    const made = await request(stack.baseUrl, 'POST', '/api/v1/customers', { key: other.key, body: { name: 'Short-lived' } });
    await request(stack.baseUrl, 'DELETE', `/api/v1/customers/${made.body.id}`, { key: other.key });
    expect(await total(other.key)).toBe(0);
    await compactRecordCounts(stack.em(), 1000);
    const rows = await stack.em().execute('select n from record_counts where company_id = ? and table_name = ?', [other.companyId, 'customers']);
    expect(rows).toEqual([]);
    expect(await total(other.key)).toBe(0);
  });
});
