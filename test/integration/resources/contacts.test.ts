import { restClient, unknownId } from '../../helpers/api-client';
import { createTenant, startStack, type TestStack } from '../../helpers/stack';
import { crudSuite, type CrudFixture } from './crud-suite';

const contactsFixture: CrudFixture = {
  collection: 'contacts',
  table: 'contacts',
  keyFields: ['first_name', 'last_name'],
  async parents({ api }) {
    const customer = (await api.create('customers', { name: 'Parent One' })).id;
    const otherCustomer = (await api.create('customers', { name: 'Parent Two' })).id;
    return {
      customer,
      otherCustomer,
      site: (await api.create('locations', { customer_id: customer, name: 'Main Site' })).id,
      otherSite: (await api.create('locations', { customer_id: otherCustomer, name: 'Their Site' })).id,
    };
  },
  body: (p, tag) => ({
    customer_id: p.customer,
    location_id: p.site,
    first_name: `Ann ${tag}`,
    last_name: 'Lee',
    title: 'Site Manager',
    email: `ann.${tag}@example.com`,
    phone: '403-555-0100',
    phone_ext: '12',
    mobile: '403-555-0111',
    notes: 'Prefers e-mail',
    is_primary: false,
    contact_tags: ['site'],
  }),
  listRecords: (p) => [
    { customer_id: p.customer, location_id: p.site, first_name: 'Ann', last_name: 'Lee', email: 'ann@example.com', is_primary: true, contact_tags: ['billing', 'site'] },
    { customer_id: p.customer, first_name: 'Bob', last_name: 'Lee', email: 'bob@example.com', is_primary: false, contact_tags: ['site'] },
    // The same name under another customer is another contact.
    { customer_id: p.otherCustomer, location_id: p.otherSite, first_name: 'ann', last_name: 'LEE', email: 'ANN@example.com' },
    { customer_id: p.otherCustomer, first_name: 'Cy', last_name: 'Ho', is_primary: true, contact_tags: ['Site'] },
  ],
  filters: [
    { query: (p) => `customer_id=${p.customer}`, expect: [0, 1] },
    { query: (p) => `customer_id=${p.otherCustomer}`, expect: [2, 3] },
    { query: (p) => `location_id=${p.site}`, expect: [0] },
    { query: () => `location_id=${unknownId()}`, expect: [] },
    { query: () => 'email=Ann%40EXAMPLE.com', expect: [0, 2] },
    { query: () => 'email=%25%40example.com', expect: [] },
    { query: () => 'is_primary=true', expect: [0, 3] },
    { query: () => 'is_primary=false', expect: [1, 2] },
    { query: () => 'tag=site', expect: [0, 1] },
    { query: () => 'tag=billing', expect: [0] },
    { query: (p) => `customer_id=${p.otherCustomer}&tag=Site`, expect: [3] },
  ],
  update: { patch: { title: 'Foreman', contact_tags: ['night', 'site'], is_primary: true }, clear: 'email' },
  textField: 'first_name',
  invalid: [
    { what: 'no last_name', on: 'create', body: (p) => ({ customer_id: p.customer, first_name: 'Solo' }), field: 'last_name' },
    { what: 'no customer_id', on: 'create', body: () => ({ first_name: 'No', last_name: 'Customer' }), field: 'customer_id' },
    { what: "a location of another of the company's customers", on: 'create', body: (p) => ({ customer_id: p.customer, first_name: 'Wrong', last_name: 'Site', location_id: p.otherSite }), field: 'location_id' },
    { what: "a location of another of the company's customers", on: 'update', body: (p) => ({ location_id: p.otherSite }), field: 'location_id' },
    { what: 'a location_id no location has', on: 'update', body: () => ({ location_id: unknownId() }), field: 'location_id' },
    { what: 'a customer_id (it cannot change)', on: 'update', body: (p) => ({ customer_id: p.otherCustomer }), field: 'customer_id' },
    { what: 'contact_tags as a string', on: 'update', body: () => ({ contact_tags: 'site' }), field: 'contact_tags' },
    { what: 'an empty tag', on: 'update', body: () => ({ contact_tags: ['site', ''] }), field: 'contact_tags[1]' },
    { what: 'a NUL character in a tag', on: 'update', body: () => ({ contact_tags: ['si\u0000te'] }), field: 'contact_tags[0]' },
    { what: 'a phone_ext over 20 characters', on: 'update', body: () => ({ phone_ext: '1'.repeat(21) }), field: 'phone_ext' },
    { what: 'is_primary as text', on: 'update', body: () => ({ is_primary: 'yes' }), field: 'is_primary' },
    { what: 'an e-mail that is not one', on: 'update', body: () => ({ email: 'ann at example' }), field: 'email' },
  ],
};

describe('REST /contacts', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ worker: false });
  });
  afterAll(() => stack.close());

  crudSuite(contactsFixture, () => stack);

  describe('contact specifics', () => {
    it("accepts a location of the contact's own customer on update, and null unlinks it", async () => {
      const api = restClient(stack, await createTenant(stack.orm));
      const customer = await api.create('customers', { name: 'Link Corp' });
      const north = await api.create('locations', { customer_id: customer.id, name: 'North' });
      const south = await api.create('locations', { customer_id: customer.id, name: 'South' });
      const contact = await api.create('contacts', { customer_id: customer.id, first_name: 'Lou', last_name: 'Link', location_id: north.id });
      const moved = await api.put(`/contacts/${contact.id}`, { location_id: south.id });
      expect(moved.status).toBe(200);
      expect(moved.body.location_id).toBe(south.id);
      const unlinked = await api.put(`/contacts/${contact.id}`, { location_id: null });
      expect(unlinked.body.location_id).toBeNull();
    });

    it("refuses a location or customer of another company (400)", async () => {
      const api = restClient(stack, await createTenant(stack.orm));
      const theirs = restClient(stack, await createTenant(stack.orm));
      const theirCustomer = await theirs.create('customers', { name: 'Theirs' });
      const theirSite = await theirs.create('locations', { customer_id: theirCustomer.id, name: 'Their Site' });
      const mine = await api.create('customers', { name: 'Mine' });

      const byCustomer = await api.post('/contacts', { customer_id: theirCustomer.id, first_name: 'A', last_name: 'B' });
      expect(byCustomer.status).toBe(400);
      expect(byCustomer.body.error.details.field).toBe('customer_id');
      const bySite = await api.post('/contacts', { customer_id: mine.id, first_name: 'A', last_name: 'B', location_id: theirSite.id });
      expect(bySite.status).toBe(400);
      expect(bySite.body.error.details.field).toBe('location_id');
    });

    it('defaults is_primary to false and contact_tags to an empty list', async () => {
      const api = restClient(stack, await createTenant(stack.orm));
      const customer = await api.create('customers', { name: 'Default Corp' });
      const contact = await api.create('contacts', { customer_id: customer.id, first_name: 'Dee', last_name: 'Fault' });
      expect(contact).toMatchObject({ is_primary: false, contact_tags: [], location_id: null, email: null });
    });
  });
});
