import { restClient, unknownId } from '../../helpers/api-client';
import { outboxOf, seedProject } from '../../helpers/fixtures';
import { createTenant, startStack, type TestStack } from '../../helpers/stack';
import { crudSuite, type CrudFixture } from './crud-suite';

const locationsFixture: CrudFixture = {
  collection: 'locations',
  table: 'locations',
  keyFields: ['name'],
  parents: async ({ api }) => ({
    customer: (await api.create('customers', { name: 'Parent One' })).id,
    otherCustomer: (await api.create('customers', { name: 'Parent Two' })).id,
  }),
  body: (p, tag) => ({
    customer_id: p.customer,
    name: `Site ${tag}`,
    address_line_1: '700 Riverside Dr',
    address_line_2: 'Unit 3',
    city: 'Calgary',
    province: 'AB',
    postal_code: 'T2P 1A1',
    country: 'CA',
    phone: '403-555-0100',
    notes: 'Gate code 1234',
    coordinates: { latitude: 51.05, longitude: -114.07 },
  }),
  listRecords: (p) => [
    { customer_id: p.customer, name: 'North Yard', city: 'Calgary', coordinates: { latitude: 51.05, longitude: -114.07 } },
    { customer_id: p.customer, name: 'South Yard', city: 'Edmonton' },
    // The same name under another customer is another location.
    { customer_id: p.otherCustomer, name: 'north yard', city: 'calgary' },
    { customer_id: p.otherCustomer, name: 'Depot' },
  ],
  filters: [
    { query: (p) => `customer_id=${p.customer}`, expect: [0, 1] },
    { query: (p) => `customer_id=${p.otherCustomer}`, expect: [2, 3] },
    { query: () => `customer_id=${unknownId()}`, expect: [] },
    { query: () => 'name=NORTH%20YARD', expect: [0, 2] },
    { query: () => 'name=North%25', expect: [] },
    { query: () => 'city=CALGARY', expect: [0, 2] },
    { query: (p) => `customer_id=${p.customer}&city=calgary`, expect: [0] },
  ],
  update: { patch: { city: 'Red Deer', phone: '403-555-0102', coordinates: { latitude: 52.27, longitude: -113.81 } }, clear: 'notes' },
  textField: 'name',
  invalid: [
    { what: 'no customer_id', on: 'create', body: () => ({ name: 'Orphan' }), field: 'customer_id' },
    { what: 'no name', on: 'create', body: (p) => ({ customer_id: p.customer }), field: 'name' },
    { what: 'a customer_id no customer has', on: 'create', body: () => ({ customer_id: unknownId(), name: 'Nowhere' }), field: 'customer_id' },
    { what: 'a customer_id that is not a UUID', on: 'create', body: () => ({ customer_id: 'Parent One', name: 'Nowhere' }), field: 'customer_id' },
    { what: 'a customer_id (it cannot change)', on: 'update', body: (p) => ({ customer_id: p.otherCustomer }), field: 'customer_id' },
    { what: 'a latitude past 90', on: 'create', body: (p) => ({ customer_id: p.customer, name: 'Pole', coordinates: { latitude: 90.5, longitude: 0 } }), field: 'coordinates.latitude' },
    { what: 'coordinates without a longitude', on: 'update', body: () => ({ coordinates: { latitude: 10 } }), field: 'coordinates.longitude' },
    { what: 'a latitude as text', on: 'update', body: () => ({ coordinates: { latitude: '51.0', longitude: -114 } }), field: 'coordinates.latitude' },
    { what: 'a postal code over 200 characters', on: 'update', body: () => ({ postal_code: 'p'.repeat(201) }), field: 'postal_code' },
    { what: 'a phone over 50 characters', on: 'update', body: () => ({ phone: '5'.repeat(51) }), field: 'phone' },
  ],
};

describe('REST /locations', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ worker: false });
  });
  afterAll(() => stack.close());

  crudSuite(locationsFixture, () => stack);

  describe('location specifics', () => {
    it('shows coordinates as an object with null members when unknown, and null clears them', async () => {
      const api = restClient(stack, await createTenant(stack.orm));
      const customer = await api.create('customers', { name: 'Geo Corp' });
      const bare = await api.create('locations', { customer_id: customer.id, name: 'No Fix' });
      expect(bare.coordinates).toEqual({ latitude: null, longitude: null });
      const placed = await api.create('locations', { customer_id: customer.id, name: 'Fixed', coordinates: { latitude: -33.86, longitude: 151.21 } });
      expect(placed.coordinates).toEqual({ latitude: -33.86, longitude: 151.21 });
      const cleared = await api.put(`/locations/${placed.id}`, { coordinates: null });
      expect(cleared.body.coordinates).toEqual({ latitude: null, longitude: null });
    });

    it("refuses a customer_id of another company's customer (400)", async () => {
      const api = restClient(stack, await createTenant(stack.orm));
      const theirs = await restClient(stack, await createTenant(stack.orm)).create('customers', { name: 'Theirs' });
      const response = await api.post('/locations', { customer_id: theirs.id, name: 'Trespass' });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'customer_id' } });
    });

    it('refuses (409) to delete a location that a project is at, and keeps it', async () => {
      const tenant = await createTenant(stack.orm);
      const api = restClient(stack, tenant);
      await seedProject(stack, tenant);
      const [site] = (await api.get('/locations?name=seed%20site')).body.data;
      const events = (await outboxOf(stack, tenant.companyId)).length;
      const response = await api.delete(`/locations/${site.id}`);
      expect(response.status).toBe(409);
      expect(response.body.error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('project') });
      expect((await api.get(`/locations/${site.id}`)).body).toEqual(site);
      expect((await outboxOf(stack, tenant.companyId)).length).toBe(events);
    });

    it('deletes a location with location.deleted carrying deleted_by, and unlinks the contacts at it', async () => {
      const tenant = await createTenant(stack.orm);
      const api = restClient(stack, tenant);
      const customer = await api.create('customers', { name: 'Unlink Corp' });
      const site = await api.create('locations', { customer_id: customer.id, name: 'Closing Site' });
      const contact = await api.create('contacts', { customer_id: customer.id, first_name: 'Sam', last_name: 'Site', location_id: site.id });
      const before = (await outboxOf(stack, tenant.companyId)).length;

      expect((await restClient(stack, tenant, { perKey: 1000 }).delete(`/locations/${site.id}`)).status).toBe(204);
      expect((await api.get(`/contacts/${contact.id}`)).body.location_id).toBeNull();
      const events = (await outboxOf(stack, tenant.companyId)).slice(before);
      expect(events.map((e) => e.event_type)).toEqual(['location.deleted']);
      expect(events[0]!.data).toEqual({ id: site.id, customer_id: customer.id, name: 'Closing Site', deleted_at: expect.any(String), deleted_by: tenant.apiKeyId });
    });

    it('moves updated_at of the contacts a location delete unlinks, so updated_since finds them', async () => {
      const api = restClient(stack, await createTenant(stack.orm));
      const customer = await api.create('customers', { name: 'Sync Corp' });
      const site = await api.create('locations', { customer_id: customer.id, name: 'Closing Site' });
      const contact = await api.create('contacts', { customer_id: customer.id, first_name: 'Sam', last_name: 'Sync', location_id: site.id });
      const since = new Date(Date.parse(contact.updated_at) + 1).toISOString();
      expect((await api.delete(`/locations/${site.id}`)).status).toBe(204);
      const changed = await api.get(`/contacts?updated_since=${encodeURIComponent(since)}`);
      expect(changed.body.data.map((c: { id: string }) => c.id)).toEqual([contact.id]);
    });
  });
});
