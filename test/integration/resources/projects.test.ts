import { restClient, unknownId } from '../../helpers/api-client';
import { outboxOf, projectCounts, seedEmployee } from '../../helpers/fixtures';
import { createTenant, startStack, type TestStack } from '../../helpers/stack';
import { crudSuite, type CrudFixture } from './crud-suite';

const projectsFixture: CrudFixture = {
  collection: 'projects',
  table: 'projects',
  keyFields: ['project_code'],
  async parents({ stack, tenant, api }) {
    const north = await api.create('customers', { name: 'Northwind' });
    const south = await api.create('customers', { name: 'Southwind' });
    return {
      north: north.id,
      south: south.id,
      riverside: (await api.create('locations', { customer_id: north.id, name: 'Riverside' })).id,
      hillside: (await api.create('locations', { customer_id: north.id, name: 'Hillside' })).id,
      harbour: (await api.create('locations', { customer_id: south.id, name: 'Harbour' })).id,
      morgan: (await api.create('contacts', { customer_id: north.id, first_name: 'Morgan', last_name: 'Lee' })).id,
      riley: (await api.create('contacts', { customer_id: north.id, first_name: 'Riley', last_name: 'Chen' })).id,
      sasha: (await api.create('contacts', { customer_id: south.id, first_name: 'Sasha', last_name: 'Roy' })).id,
      accounts: await seedEmployee(stack, tenant, { name: 'Ava Accounts', employeeType: 'project_owner' }),
      owner: await seedEmployee(stack, tenant, { name: 'Omar Owner', employeeType: 'project_owner' }),
    };
  },
  body: (parents, tag) => ({
    project_code: `PRJ-${tag}`,
    name: `Tower ${tag}`,
    description: 'Twelve storeys',
    status: 'active',
    priority: 'high',
    color_index: 3,
    customer_id: parents.north,
    location_id: parents.riverside,
    contact_ids: [parents.riley, parents.morgan],
    account_manager_id: parents.accounts,
    internal_manager_id: parents.owner,
    start_date: '2026-04-01',
    end_date: '2027-06-30',
    equipment: ['tower crane'],
    custom_fields: { permit: 'BP-42' },
    docs: [{ name: 'Drawings', url: 'https://files.example/drawings.pdf' }],
  }),
  listRecords: (parents) => [
    { project_code: 'L-1', name: 'One', customer_id: parents.north, location_id: parents.riverside },
    { project_code: 'L-2', name: 'Two', customer_id: parents.north, location_id: parents.hillside, status: 'on_hold' },
    { project_code: 'L-3', name: 'Three', customer_id: parents.south, location_id: parents.harbour },
    { project_code: 'L-4', name: 'Four', customer_id: parents.south, location_id: parents.harbour, status: 'on_hold' },
  ],
  filters: [
    { query: () => 'status=active', expect: [0, 2] },
    { query: () => 'status=on_hold', expect: [1, 3] },
    { query: () => 'status=closed', expect: [] },
    { query: (p) => `customer_id=${p.north}`, expect: [0, 1] },
    { query: () => `customer_id=${unknownId()}`, expect: [] },
    { query: (p) => `location_id=${p.hillside}`, expect: [1] },
    { query: (p) => `customer_id=${p.south}&status=on_hold`, expect: [3] },
    { query: () => 'project_code=l-3', expect: [2] },
    { query: () => 'project_code=L-', expect: [] },
  ],
  update: { patch: { description: 'Fourteen storeys', priority: 'urgent', color_index: 5, status: 'on_hold', equipment: ['tower crane', 'hoist'] }, clear: 'description' },
  textField: 'name',
  invalid: [
    { what: 'no customer', on: 'create', body: (p) => ({ project_code: 'NC-1', name: 'No customer', location_id: p.riverside }), field: 'customer_id' },
    { what: 'both customer_id and customer', on: 'create', body: (p) => ({ project_code: 'BC-1', name: 'Both', customer_id: p.north, customer: { name: 'X' }, location_id: p.riverside }), field: 'customer_id' },
    { what: 'no location', on: 'create', body: (p) => ({ project_code: 'NL-1', name: 'No location', customer_id: p.north }), field: 'location_id' },
    { what: "another customer's location", on: 'create', body: (p) => ({ project_code: 'OL-1', name: 'Other', customer_id: p.north, location_id: p.harbour }), field: 'location_id' },
    { what: "another customer's location", on: 'update', body: (p) => ({ location_id: p.harbour }), field: 'location_id' },
    { what: "another customer's contact", on: 'create', body: (p) => ({ project_code: 'OC-1', name: 'Other', customer_id: p.north, location_id: p.riverside, contact_ids: [p.sasha] }), field: 'contact_ids' },
    { what: "another customer's contact", on: 'update', body: (p) => ({ contact_ids: [p.morgan, p.sasha] }), field: 'contact_ids' },
    { what: 'a customer of no one', on: 'create', body: (p) => ({ project_code: 'UC-1', name: 'Unknown', customer_id: unknownId(), location_id: p.riverside }), field: 'customer_id' },
    { what: 'an unknown account manager', on: 'create', body: (p) => ({ project_code: 'UM-1', name: 'Unknown', customer_id: p.north, location_id: p.riverside, account_manager_id: unknownId() }), field: 'account_manager_id' },
    { what: 'an unknown project owner', on: 'update', body: () => ({ internal_manager_id: unknownId() }), field: 'internal_manager_id' },
    { what: 'status closed (closing is POST /projects/{id}/close)', on: 'update', body: () => ({ status: 'closed' }), field: 'status' },
    { what: 'an end date before the start date', on: 'update', body: () => ({ end_date: '2026-03-31' }), field: 'end_date' },
    { what: 'a color_index of 32', on: 'update', body: () => ({ color_index: 32 }), field: 'color_index' },
    { what: 'a doc without a url', on: 'update', body: () => ({ docs: [{ name: 'Plans' }] }), field: 'docs[0].url' },
    { what: 'no project_code', on: 'create', body: (p) => ({ name: 'Codeless', customer_id: p.north, location_id: p.riverside }), field: 'project_code' },
  ],
};

describe('REST /projects', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.close());

  crudSuite(projectsFixture, () => stack);

  describe('creation by the projectCreation workflow', () => {
    it('finds or creates the customer, location and contacts given by name, as inbound project.created does', async () => {
      const tenant = await createTenant(stack.orm);
      const api = restClient(stack, tenant);
      const existing = await api.create('customers', { name: 'Harbour Group' });
      const response = await api.post('/projects', {
        project_code: 'NEW-1',
        name: 'Pier',
        customer: { name: 'HARBOUR group', email: 'ignored@example.com' },
        location: { name: 'Pier 21', city: 'Halifax' },
        contacts: [{ first_name: 'Sam', last_name: 'Doucet', email: 'sam@example.com' }],
      });
      expect(response.status).toBe(201);
      expect(response.headers.get('location')).toBe(`/api/v1/projects/${response.body.id}`);
      expect(response.body).toMatchObject({ project_code: 'NEW-1', name: 'Pier', status: 'active', customer_id: existing.id, contact_ids: [expect.any(String)] });
      expect(await projectCounts(stack, tenant.companyId)).toEqual({ customers: 1, locations: 1, contacts: 1, projects: 1 });
      const location = await api.get(`/locations/${response.body.location_id}`);
      expect(location.body).toMatchObject({ name: 'Pier 21', city: 'Halifax', customer_id: existing.id });
      expect((await outboxOf(stack, tenant.companyId)).map((e) => e.event_type)).toEqual(['customer.created', 'location.created', 'contact.created', 'project.created']);
    });

    it('answers 409 when the code is taken, and writes no customer, location or contact', async () => {
      const tenant = await createTenant(stack.orm);
      const api = restClient(stack, tenant);
      const first = await api.post('/projects', { project_code: 'DUP-1', name: 'First', customer: { name: 'A' }, location: { name: 'L' } });
      expect(first.status).toBe(201);
      const second = await api.post('/projects', { project_code: 'dup-1', name: 'Second', customer: { name: 'B' }, location: { name: 'M' } });
      expect(second.status).toBe(409);
      expect(second.body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'project_code' } });
      expect(await projectCounts(stack, tenant.companyId)).toEqual({ customers: 1, locations: 1, contacts: 0, projects: 1 });
    });

    it('refuses a change to a closed project (409) and lists it under status=closed', async () => {
      const tenant = await createTenant(stack.orm);
      const api = restClient(stack, tenant);
      const project = (await api.post('/projects', { project_code: 'SHUT-1', name: 'Shut', customer: { name: 'A' }, location: { name: 'L' } })).body;
      const closed = await api.post(`/projects/${project.id}/close`, {});
      expect(closed.status).toBe(200);
      expect(closed.body).toMatchObject({ status: 'closed', closed_at: expect.any(String) });
      const change = await api.put(`/projects/${project.id}`, { name: 'Reopened' });
      expect(change.status).toBe(409);
      expect(change.body.error).toMatchObject({ code: 'CONFLICT', details: { reason: 'current status closed' } });
      expect((await api.get('/projects?status=closed')).body.data.map((p: { id: string }) => p.id)).toEqual([project.id]);
    });
  });
});
