import { customers } from '../../src/domain/business/customers';
import { actorOf } from '../helpers/fixtures';
import { createTenant, startStack, type Tenant, type TestStack } from '../helpers/stack';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A create whose natural key a unique index guards (customers' name) takes no lock and looks nothing up: it inserts,
 * and the index's refusal is the 409 (the CRUD suites check that for every resource). A find-or-create still locks
 * and looks first, so it must cope with such a create committing between its look and its insert.
 */
describe('natural keys guarded by their unique index', () => {
  let stack: TestStack;
  let tenant: Tenant;

  beforeAll(async () => {
    stack = await startStack({ worker: false });
    tenant = await createTenant(stack.orm, ['admin']);
  });
  afterAll(() => stack.close());

  const namedRows = async (name: string) =>
    (await stack.em().execute<{ id: string }[]>('select id from customers where company_id = ? and lower(name) = lower(?)', [tenant.companyId, name])).map((r) => r.id);

  it('a find-or-create that a create overtakes between its look and its insert finds that record, in the same transaction', async () => {
    const actor = actorOf(tenant);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // The create inserts and keeps its transaction open until released: its row is not visible yet.
    let createdId = '';
    const creating = stack.orm.em.fork().transactional(async (tx) => {
      createdId = (await customers.create(tx, actor, { name: 'Racing Builders' })).id;
      await held;
    });
    await pause(300);
    expect(createdId).not.toBe('');
    // Inside a caller's transaction, as project creation calls it: it looks (nothing committed), then inserts, which
    // waits on the index for the create's transaction.
    const finding = stack.orm.em.fork().transactional(async (tx) => {
      const found = await customers.findOrCreate(tx, actor, { name: 'racing builders' });
      // The caller's transaction is still usable after the refused insert.
      const [{ n }] = await tx.execute<{ n: number }[]>('select count(*)::int as n from customers where company_id = ?', [tenant.companyId]);
      return { ...found, n };
    });
    await pause(300);
    release();
    await creating;
    const found = await finding;
    expect(found.created).toBe(false);
    expect(found.record.id).toBe(createdId);
    expect(found.record.name).toBe('Racing Builders');
    expect(found.n).toBeGreaterThanOrEqual(1);
    expect(await namedRows('Racing Builders')).toEqual([createdId]);
  });

  it('answers a create of a key taken in another case with the 409 naming the field, and writes nothing', async () => {
    const actor = actorOf(tenant);
    await customers.create(stack.orm.em.fork(), actor, { name: 'Keyed Works' });
    const outboxBefore = (await stack.em().execute<{ n: number }[]>('select count(*)::int as n from outbox_events where company_id = ?', [tenant.companyId]))[0]!.n;
    await expect(customers.create(stack.orm.em.fork(), actor, { name: 'KEYED WORKS' })).rejects.toMatchObject({
      code: 'CONFLICT',
      message: 'A customer named "KEYED WORKS" already exists',
      details: { field: 'name' },
    });
    expect(await namedRows('Keyed Works')).toHaveLength(1);
    expect((await stack.em().execute<{ n: number }[]>('select count(*)::int as n from outbox_events where company_id = ?', [tenant.companyId]))[0]!.n).toBe(outboxBefore);
  });
});
