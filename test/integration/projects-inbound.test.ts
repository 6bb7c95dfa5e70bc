import { type InboundSender, inboundSender, type RestClient, restClient } from '../helpers/api-client';
import { countRows, outboxOf, projectCounts, projectData, seedEmployee } from '../helpers/fixtures';
import { createTenant, startStack, type Tenant, type TestStack } from '../helpers/stack';

/** Inbound project.updated and project.deleted (webhooks.md 2.3, 4). */
describe('inbound project operations', () => {
  let stack: TestStack;
  let tenant: Tenant;
  let inbound: InboundSender;
  let api: RestClient;

  beforeAll(async () => {
    stack = await startStack();
    tenant = await createTenant(stack.orm, ['admin']);
    inbound = inboundSender(stack, tenant);
    api = restClient(stack, tenant);
    await seedEmployee(stack, tenant, { empNumber: 'AM-1', name: 'Ava Accounts' });
  });
  afterAll(() => stack.close());

  /** A new project (with customer "Northwind Developments", location "Riverside Lot 7" and two contacts) and its REST record. */
  async function newProject(code: string, overrides: Record<string, unknown> = {}) {
    const response = await inbound.send('project.created', projectData(code, overrides));
    expect(response.status).toBe(200);
    return (await api.get(`/projects/${response.body.record_id}`)).body;
  }
  const project = async (id: string) => (await api.get(`/projects/${id}`)).body;
  const eventsSince = async (count: number) => (await outboxOf(stack, tenant.companyId)).slice(count);
  const eventCount = async () => (await outboxOf(stack, tenant.companyId)).length;

  describe('project.updated', () => {
    it('finds the project by project_code (ignoring case) and changes only the fields given', async () => {
      const before = await newProject('UP-1');
      const events = await eventCount();
      const response = await inbound.send('project.updated', { project_code: 'up-1', description: 'Now fourteen storeys', priority: 'urgent' });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ success: true, message: 'Project up-1 updated', event_id: expect.any(String), record_id: before.id });
      expect(await project(before.id)).toEqual({ ...before, description: 'Now fourteen storeys', priority: 'urgent', updated_at: expect.any(String) });
      const [updated, ...others] = await eventsSince(events);
      expect(others).toEqual([]);
      expect(updated!).toMatchObject({ id: response.body.event_id, event_type: 'project.updated' });
      expect(Object.keys(updated!.data.changes).sort()).toEqual(['description', 'priority']);
    });

    it('switches to an existing customer by name (ignoring case) and creates the new location under it', async () => {
      const other = await newProject('UP-2-OTHER', { customer_name: 'Harbour Group', location_name: 'Pier 21', contacts: [] });
      const before = await newProject('UP-2');
      const events = await eventCount();
      const response = await inbound.send('project.updated', {
        project_code: 'UP-2',
        customer_name: 'HARBOUR group',
        location_name: 'Pier 22',
        location_city: 'Halifax',
        location_province: 'NS',
      });
      expect(response.status).toBe(200);
      const after = await project(before.id);
      expect(after.customer_id).toBe(other.customer_id);
      expect(after.location_id).not.toBe(other.location_id);
      // The contacts were the old customer's: they stay with it.
      expect(after.contact_ids).toEqual([]);
      expect((await api.get(`/locations/${after.location_id}`)).body).toMatchObject({ name: 'Pier 22', city: 'Halifax', province: 'NS', customer_id: other.customer_id });
      expect((await eventsSince(events)).map((e) => e.event_type)).toEqual(['location.created', 'project.updated']);
    });

    it('creates a customer named for the first time, with its customer_* details, exactly as creation does', async () => {
      const before = await newProject('UP-3');
      const response = await inbound.send('project.updated', {
        project_code: 'UP-3',
        customer_name: 'Brand New Co',
        customer_email: 'hello@brandnew.example',
        customer_type: 'residential',
        location_name: 'Lot 1',
      });
      expect(response.status).toBe(200);
      const after = await project(before.id);
      expect((await api.get(`/customers/${after.customer_id}`)).body).toMatchObject({ name: 'Brand New Co', email: 'hello@brandnew.example', type: 'residential' });
    });

    it('answers 400 naming location_name when the customer changes without one, and changes nothing', async () => {
      const before = await newProject('UP-4');
      const counts = await projectCounts(stack, tenant.companyId);
      const response = await inbound.send('project.updated', { project_code: 'UP-4', customer_name: 'Lonely Customer' });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'data.location_name' } });
      expect(await projectCounts(stack, tenant.companyId)).toEqual(counts);
      expect(await project(before.id)).toEqual(before);
    });

    it("switches to another location of the same customer and updates its details from location_* fields", async () => {
      const before = await newProject('UP-5', { customer_name: 'Five Co', location_name: 'Site A' });
      const response = await inbound.send('project.updated', { project_code: 'UP-5', location_name: 'Site B', location_postal_code: 'T2P 5B5' });
      expect(response.status).toBe(200);
      const after = await project(before.id);
      expect(after.customer_id).toBe(before.customer_id);
      expect((await api.get(`/locations/${after.location_id}`)).body).toMatchObject({ name: 'Site B', postal_code: 'T2P 5B5' });
      // Details without a location_name update the current location.
      const events = await eventCount();
      expect((await inbound.send('project.updated', { project_code: 'UP-5', location_city: 'Red Deer' })).status).toBe(200);
      expect((await api.get(`/locations/${after.location_id}`)).body.city).toBe('Red Deer');
      expect((await eventsSince(events)).map((e) => e.event_type)).toEqual(['location.updated']);
    });

    it('links the contacts given, finding existing ones by name and creating the others', async () => {
      const before = await newProject('UP-6', { customer_name: 'Six Co', location_name: 'Six Site' });
      expect(before.contact_ids).toHaveLength(2);
      const contacts = await countRows(stack, 'contacts', tenant.companyId);
      const response = await inbound.send('project.updated', {
        project_code: 'UP-6',
        contacts: [
          { first_name: 'MORGAN', last_name: 'lee' },
          { first_name: 'Quinn', last_name: 'Park', email: 'quinn@six.example' },
        ],
      });
      expect(response.status).toBe(200);
      const after = await project(before.id);
      expect(after.contact_ids).toHaveLength(3);
      expect(after.contact_ids.slice(0, 2)).toEqual(before.contact_ids);
      expect(await countRows(stack, 'contacts', tenant.companyId)).toBe(contacts + 1);
      const updated = (await outboxOf(stack, tenant.companyId)).find((e) => e.event_type === 'project.updated' && e.data.id === before.id)!;
      expect(updated.data.changes).toEqual({ contact_ids: { added: [after.contact_ids[2]], removed: [] } });
    });

    it('assigns an account manager by employee number, with employee.assigned', async () => {
      const before = await newProject('UP-7', { customer_name: 'Seven Co', location_name: 'Seven Site' });
      const events = await eventCount();
      expect((await inbound.send('project.updated', { project_code: 'UP-7', account_manager_emp_number: 'AM-1' })).status).toBe(200);
      expect((await project(before.id)).account_manager_id).toEqual(expect.any(String));
      const assigned = (await eventsSince(events)).filter((e) => e.event_type === 'employee.assigned');
      expect(assigned.map((e) => [e.catalog_data!.employee.emp_number, e.catalog_data!.role, e.catalog_data!.project.project_code])).toEqual([['AM-1', 'account_manager', 'UP-7']]);
      const unknown = await inbound.send('project.updated', { project_code: 'UP-7', account_manager_emp_number: 'NOBODY' });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error).toMatchObject({ details: { field: 'data.account_manager_emp_number' } });
    });

    it('answers 404 naming project_code to a code no project has', async () => {
      const response = await inbound.send('project.updated', { project_code: 'NO-SUCH', description: 'x' });
      expect(response.status).toBe(404);
      expect(response.body.error).toMatchObject({ code: 'NOT_FOUND', details: { field: 'data.project_code' } });
    });

    it('answers 409 to a change of a closed project', async () => {
      const before = await newProject('UP-8', { customer_name: 'Eight Co', location_name: 'Eight Site' });
      expect((await inbound.send('project.closed', { project_code: 'UP-8' })).status).toBe(200);
      const response = await inbound.send('project.updated', { project_code: 'UP-8', description: 'Reopen?' });
      expect(response.status).toBe(409);
      expect((await project(before.id)).description).toBe(before.description);
    });
  });

  describe('project.deleted', () => {
    it('deletes the project and its work orders, each with its event, the reason in the catalog events', async () => {
      const before = await newProject('DEL-1', { customer_name: 'Del Co', location_name: 'Del Site' });
      const orders = [];
      for (const phase of ['Demo', 'Haul']) orders.push((await inbound.send('work_order.created', { project_code: 'DEL-1', phase_name: phase })).body.record_id);
      const events = await eventCount();
      const response = await inbound.send('project.deleted', { project_code: 'del-1', reason: 'Cancelled by owner' });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ success: true, message: 'Project del-1 deleted', event_id: expect.any(String), record_id: before.id });
      expect((await api.get(`/projects/${before.id}`)).status).toBe(404);
      for (const id of orders) expect((await api.get(`/work-orders/${id}`)).status).toBe(404);
      const after = await eventsSince(events);
      expect(after.map((e) => e.event_type)).toEqual(['work_order.deleted', 'work_order.deleted', 'project.deleted']);
      expect(after.at(-1)!.id).toBe(response.body.event_id);
      expect(after.map((e) => e.catalog_data?.reason)).toEqual(['Cancelled by owner', 'Cancelled by owner', 'Cancelled by owner']);
      // The customer and location stay.
      expect((await api.get(`/customers/${before.customer_id}`)).status).toBe(200);
    });

    it('answers 404 to a code no project has, and 400 without one', async () => {
      expect((await inbound.send('project.deleted', { project_code: 'NO-SUCH' })).status).toBe(404);
      const missing = await inbound.send('project.deleted', {});
      expect(missing.status).toBe(400);
      expect(missing.body.error).toMatchObject({ details: { field: 'data.project_code' } });
    });
  });
});
