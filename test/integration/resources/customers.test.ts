import { restClient, unique, unknownId } from '../../helpers/api-client';
import { outboxOf, seedEmployee, seedProject } from '../../helpers/fixtures';
import { createTenant, startStack, type TestStack } from '../../helpers/stack';
import { crudSuite, type CrudFixture } from './crud-suite';

const customersFixture: CrudFixture = {
  collection: 'customers',
  table: 'customers',
  keyFields: ['name'],
  parents: async ({ stack, tenant }) => ({ manager: await seedEmployee(stack, tenant, { name: 'Morgan Manager' }) }),
  body: (p, tag) => ({
    name: `Customer ${tag}`,
    type: 'commercial',
    email: `ops.${tag}@example.com`,
    phone: '+1 403 555 0100',
    website: 'https://northwind.example.com',
    status: 'Active',
    notes: 'Pays on time',
    billing_address: { address_line_1: '200 Bay St', address_line_2: 'Floor 3', city: 'Toronto', province: 'ON', postal_code: 'M5J 2J2', country: 'Canada' },
    account_manager_id: p.manager,
  }),
  listRecords: (p) => [
    {
      name: 'Alpha Builders',
      type: 'commercial',
      status: 'Active',
      account_manager_id: p.manager,
      notes: 'Since 2019',
      billing_address: { address_line_1: '1 Main St', city: 'Calgary', province: 'AB', postal_code: 'T2P 1A1', country: 'CA' },
    },
    { name: 'Beta Homes', type: 'residential', status: 'Inactive' },
    { name: 'Gamma Corp', type: 'Commercial', status: 'active', account_manager_id: p.manager },
    { name: 'Delta Works', status: 'Active' },
  ],
  filters: [
    { query: () => 'name=alpha%20BUILDERS', expect: [0] },
    // LIKE wildcards in the value are plain characters.
    { query: () => 'name=Beta_Homes', expect: [] },
    { query: () => 'name=%25', expect: [] },
    { query: () => 'status=ACTIVE', expect: [0, 2, 3] },
    { query: () => 'status=inactive', expect: [1] },
    { query: () => 'type=commercial', expect: [0, 2] },
    { query: (p) => `account_manager_id=${p.manager}`, expect: [0, 2] },
    { query: () => `account_manager_id=${unknownId()}`, expect: [] },
    { query: () => 'status=active&type=COMMERCIAL&name=gamma%20corp', expect: [2] },
  ],
  update: { patch: { phone: '+1 403 555 0199', status: 'Inactive' }, clear: 'email' },
  textField: 'name',
  invalid: [
    { what: 'no name', on: 'create', body: () => ({ type: 'commercial' }), field: 'name' },
    { what: 'a blank name', on: 'create', body: () => ({ name: '   ' }), field: 'name' },
    { what: 'a null name', on: 'update', body: () => ({ name: null }), field: 'name' },
    { what: 'an e-mail that is not one', on: 'create', body: () => ({ name: `C ${unique()}`, email: 'not-an-email' }), field: 'email' },
    { what: 'a website that is not a URL', on: 'update', body: () => ({ website: 'not a url' }), field: 'website' },
    { what: 'notes over 10000 characters', on: 'update', body: () => ({ notes: 'n'.repeat(10_001) }), field: 'notes' },
    { what: 'a billing city over 200 characters', on: 'create', body: () => ({ name: `C ${unique()}`, billing_address: { city: 'c'.repeat(201) } }), field: 'billing_address.city' },
    { what: 'an unknown billing address member', on: 'update', body: () => ({ billing_address: { zip: '12345' } }), field: 'billing_address.zip' },
    { what: 'an account manager no employee is', on: 'create', body: () => ({ name: `C ${unique()}`, account_manager_id: unknownId() }), field: 'account_manager_id' },
    { what: 'an account manager id that is not a UUID', on: 'update', body: () => ({ account_manager_id: 'E-100' }), field: 'account_manager_id' },
  ],
};

describe('REST /customers', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ worker: false });
  });
  afterAll(() => stack.close());

  crudSuite(customersFixture, () => stack);

  describe('customer specifics', () => {
    it('updates billing_address member by member; a null member clears that member only', async () => {
      const tenant = await createTenant(stack.orm);
      const api = restClient(stack, tenant);
      const created = await api.create('customers', { name: 'Billing Co', billing_address: { address_line_1: '1 Main St', city: 'Calgary', province: 'AB' } });
      const moved = await api.put(`/customers/${created.id}`, { billing_address: { city: 'Edmonton', postal_code: 'T5J 0N3', province: null } });
      expect(moved.status).toBe(200);
      expect(moved.body.billing_address).toEqual({ address_line_1: '1 Main St', address_line_2: null, city: 'Edmonton', province: null, postal_code: 'T5J 0N3', country: null });
      expect((await api.get(`/customers/${created.id}`)).body).toEqual(moved.body);
    });

    it('clears the whole billing_address given null, as PUT documents for optional fields', async () => {
      const api = restClient(stack, await createTenant(stack.orm));
      const created = await api.create('customers', { name: 'Clear Co', billing_address: { address_line_1: '1 Main St', city: 'Calgary' } });
      const cleared = await api.put(`/customers/${created.id}`, { billing_address: null });
      expect(cleared.status).toBe(200);
      expect(cleared.body.billing_address).toEqual({ address_line_1: null, address_line_2: null, city: null, province: null, postal_code: null, country: null });
    });

    it("refuses an account manager who is another company's employee (400)", async () => {
      const tenant = await createTenant(stack.orm);
      const other = await createTenant(stack.orm);
      const theirEmployee = await seedEmployee(stack, other);
      const response = await restClient(stack, tenant).post('/customers', { name: 'Poacher Inc', account_manager_id: theirEmployee });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'account_manager_id' } });
    });

    it('stores names trimmed, so a name with surrounding spaces is the same key', async () => {
      const api = restClient(stack, await createTenant(stack.orm));
      const created = await api.create('customers', { name: '  Trim Corp  ' });
      expect(created.name).toBe('Trim Corp');
      expect((await api.post('/customers', { name: 'trim corp ' })).status).toBe(409);
    });

    it('refuses (409) to delete a customer that has a project, and deletes nothing', async () => {
      const tenant = await createTenant(stack.orm);
      const api = restClient(stack, tenant);
      await seedProject(stack, tenant);
      const [customer] = (await api.get('/customers?name=seed%20customer')).body.data;
      const [location] = (await api.get(`/locations?customer_id=${customer.id}`)).body.data;
      const events = (await outboxOf(stack, tenant.companyId)).length;

      const response = await api.delete(`/customers/${customer.id}`);
      expect(response.status).toBe(409);
      expect(response.body.error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('project') });
      expect((await api.get(`/customers/${customer.id}`)).status).toBe(200);
      expect((await api.get(`/locations/${location.id}`)).status).toBe(200);
      expect((await outboxOf(stack, tenant.companyId)).length).toBe(events);
    });

    it('deletes its contacts and locations with it, each with its own deleted event carrying deleted_by', async () => {
      const tenant = await createTenant(stack.orm);
      const api = restClient(stack, tenant);
      const customer = await api.create('customers', { name: 'Cascade Corp' });
      const survivor = await api.create('customers', { name: 'Survivor Corp' });
      const north = await api.create('locations', { customer_id: customer.id, name: 'North' });
      const south = await api.create('locations', { customer_id: customer.id, name: 'South' });
      const keep = await api.create('locations', { customer_id: survivor.id, name: 'North' });
      const ann = await api.create('contacts', { customer_id: customer.id, first_name: 'Ann', last_name: 'Lee', location_id: north.id });
      const bob = await api.create('contacts', { customer_id: customer.id, first_name: 'Bob', last_name: 'Lee' });
      const kept = await api.create('contacts', { customer_id: survivor.id, first_name: 'Ann', last_name: 'Lee' });
      const before = (await outboxOf(stack, tenant.companyId)).length;

      // The tenant's own key, so deleted_by is known.
      const response = await restClient(stack, tenant, { perKey: 1000 }).delete(`/customers/${customer.id}`);
      expect(response.status).toBe(204);

      for (const [collection, id] of [['customers', customer.id], ['locations', north.id], ['locations', south.id], ['contacts', ann.id], ['contacts', bob.id]]) {
        expect({ collection, id, status: (await api.get(`/${collection}/${id}`)).status }).toEqual({ collection, id, status: 404 });
      }
      expect((await api.get(`/customers/${survivor.id}`)).status).toBe(200);
      expect((await api.get(`/locations/${keep.id}`)).status).toBe(200);
      expect((await api.get(`/contacts/${kept.id}`)).status).toBe(200);

      const events = (await outboxOf(stack, tenant.companyId)).slice(before);
      expect(events.map((e) => [e.event_type, e.data.id])).toEqual(
        expect.arrayContaining([
          ['contact.deleted', ann.id],
          ['contact.deleted', bob.id],
          ['location.deleted', north.id],
          ['location.deleted', south.id],
          ['customer.deleted', customer.id],
        ]),
      );
      expect(events).toHaveLength(5);
      expect(new Set(events.map((e) => e.id)).size).toBe(5);
      for (const event of events) {
        expect(event.origin_api_key_id).toBe(tenant.apiKeyId);
        expect(event.data.deleted_by).toBe(tenant.apiKeyId);
      }
      expect(events.find((e) => e.event_type === 'customer.deleted')!.data).toEqual({
        id: customer.id,
        name: 'Cascade Corp',
        deleted_at: expect.any(String),
        deleted_by: tenant.apiKeyId,
      });
    });

    it('deletes a customer with nothing attached, emitting only customer.deleted', async () => {
      const tenant = await createTenant(stack.orm);
      const api = restClient(stack, tenant);
      const customer = await api.create('customers', { name: 'Lonely LLC' });
      const before = (await outboxOf(stack, tenant.companyId)).length;
      expect((await api.delete(`/customers/${customer.id}`)).status).toBe(204);
      expect((await outboxOf(stack, tenant.companyId)).slice(before).map((e) => e.event_type)).toEqual(['customer.deleted']);
    });
  });
});
