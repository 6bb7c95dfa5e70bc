import { PreparedStatement } from '../../src/db/prepared-statement';
import { createTenant, request, startStack, type Tenant, type TestStack } from '../helpers/stack';

/**
 * The hot statements pg prepares once per connection: the admission and the record read by id. A stack of its own
 * rather than a place in another suite: the first test alters a table of its database.
 */
describe('prepared statements', () => {
  let stack: TestStack;
  let tenant: Tenant;

  beforeAll(async () => {
    stack = await startStack({ worker: false });
    tenant = await createTenant(stack.orm, ['admin']);
  });
  afterAll(() => stack.close());

  it("keep answering after a later release's migration adds a column to a table they read", async () => {
    const created = await request(stack.baseUrl, 'POST', '/api/v1/customers', { key: tenant.key, body: { name: 'Prepared' } });
    expect(created.status).toBe(201);
    const read = () => Promise.all(Array.from({ length: 16 }, () => request(stack.baseUrl, 'GET', `/api/v1/customers/${created.body.id}`, { key: tenant.key })));
    // Concurrent reads prepare the statements on several of the api's connections.
    const before = await read();
    expect(before.map((r) => r.status)).toEqual(Array(16).fill(200));
    await stack.em().execute('alter table customers add column added_by_a_later_release text');
    const after = await read();
    expect(after.map((r) => [r.status, r.body])).toEqual(Array(16).fill([200, before[0]!.body]));
  });

  it("run on the connection of the entity manager's transaction when it has one", async () => {
    const statement = new PreparedStatement<{ name: string }>('test-customer-names', 'select name from customers where company_id = $1 and name = $2');
    const seen = await stack.orm.em.fork().transactional(async (tx) => {
      await tx.execute(`insert into customers (id, company_id, created_at, updated_at, name, type) values (gen_random_uuid(), ?, now(), now(), 'Uncommitted', 'commercial')`, [
        tenant.companyId,
      ]);
      return {
        inside: await statement.rows(tx, [tenant.companyId, 'Uncommitted']),
        outside: await statement.rows(stack.orm.em.fork(), [tenant.companyId, 'Uncommitted']),
      };
    });
    expect(seen).toEqual({ inside: [{ name: 'Uncommitted' }], outside: [] });
  });

  it('take their parameters by name, each in its place, when they name them', async () => {
    const statement = new PreparedStatement<{ difference: number }, { minuend: number; subtrahend: number }>('test-named-parameters', 'select $1::int - $2::int as difference', {
      params: { minuend: 1, subtrahend: 2 },
    });
    expect(await statement.run(stack.orm.em.fork(), { subtrahend: 3, minuend: 10 })).toEqual([{ difference: 7 }]);
    expect(() => new PreparedStatement('test-misplaced-parameters', 'select $1::int, $3::int', { params: { a: 1, b: 3 } })).toThrow('its parameters must take the places $1 to $2');
  });
});
