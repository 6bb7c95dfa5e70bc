import { type InboundSender, inboundSender, type RestClient, restClient } from '../helpers/api-client';
import { countRows, outboxOf, seedEmployee, seedProject } from '../helpers/fixtures';
import { expectError, expectRecorded } from '../helpers/inbound-assertions';
import { startReceiver, type TestReceiver } from '../helpers/https-receiver';
import { waitFor } from '../helpers/processes';
import { createTenant, envelope, type JsonResponse, sendInbound, startStack, type Tenant, type TestStack } from '../helpers/stack';
import { addApiKey, deliveriesOf, registerEndpoint } from '../helpers/webhooks';

/**
 * The inbound customer, location, contact and vendor operations (webhooks.md 2.5, 2.6, 4): records are
 * identified by natural key, case-insensitively, through the same services as REST.
 */
describe('inbound customer, location, contact and vendor operations', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.close());

  /** A new company: an inbound sender and a REST client. */
  async function company(): Promise<{ tenant: Tenant; inbound: InboundSender; api: RestClient }> {
    const tenant = await createTenant(stack.orm, ['admin']);
    return { tenant, inbound: inboundSender(stack, tenant), api: restClient(stack, tenant) };
  }

  /** expectRecorded, and the event is about record_id. */
  async function expectRecordedAbout(response: JsonResponse & { sentWith: Tenant }, eventType: string) {
    const event = await expectRecorded(stack, response, eventType);
    expect(event.data.id).toBe(response.body.record_id);
    return event;
  }

  describe('customer.*', () => {
    it('customer.created creates the customer and answers with the event_id of its customer.created', async () => {
      const { inbound, api } = await company();
      const response = await inbound.send('customer.created', {
        name: 'Acme Corp',
        type: 'commercial',
        email: 'ops@acme.example',
        phone: '+1 403 555 0100',
        website: 'https://acme.example',
        status: 'Active',
        notes: 'Key account',
      });
      const event = await expectRecordedAbout(response, 'customer.created');
      expect(event.data).toMatchObject({ name: 'Acme Corp', type: 'commercial', email: 'ops@acme.example', created_by: response.sentWith.apiKeyId });
      expect(response.body.message).toContain('Acme Corp');

      const record = await api.get(`/customers/${response.body.record_id}`);
      expect(record.body).toMatchObject({ name: 'Acme Corp', type: 'commercial', status: 'Active', website: 'https://acme.example', notes: 'Key account' });
    });

    it('customer.created resolves account_manager_emp_number, and an unknown number is a 400 naming it', async () => {
      const { tenant, inbound, api } = await company();
      const manager = await seedEmployee(stack, tenant, { empNumber: 'AM-7', name: 'Avery Manager' });
      const response = await inbound.send('customer.created', { name: 'Managed Co', account_manager_emp_number: 'AM-7' });
      await expectRecordedAbout(response, 'customer.created');
      expect((await api.get(`/customers/${response.body.record_id}`)).body.account_manager_id).toBe(manager);

      const unknown = await inbound.send('customer.created', { name: 'Unmanaged Co', account_manager_emp_number: 'AM-404' });
      expectError(unknown, 400, 'INVALID_REQUEST', 'data.account_manager_emp_number');
      expect(await countRows(stack, 'customers', tenant.companyId)).toBe(1);
    });

    it('customer.updated finds the customer by customer_name ignoring case and changes only the fields given', async () => {
      const { inbound, api } = await company();
      const created = await inbound.send('customer.created', { name: 'Acme Corp', email: 'ops@acme.example', status: 'Active' });
      const before = (await api.get(`/customers/${created.body.record_id}`)).body;

      const response = await inbound.send('customer.updated', { customer_name: 'ACME corp', phone: '+1 403 555 0199' });
      const event = await expectRecordedAbout(response, 'customer.updated');
      expect(response.body.record_id).toBe(created.body.record_id);
      expect(event.data).toMatchObject({ name: 'Acme Corp', phone: '+1 403 555 0199', updated_by: response.sentWith.apiKeyId });
      const after = (await api.get(`/customers/${created.body.record_id}`)).body;
      expect(after).toEqual({ ...before, phone: '+1 403 555 0199', updated_at: expect.any(String) });
    });

    it('customer.updated renames the customer with name; the new name then identifies it and the old one does not', async () => {
      const { inbound, api } = await company();
      const created = await inbound.send('customer.created', { name: 'Acme Corp' });
      const renamed = await inbound.send('customer.updated', { customer_name: 'acme corp', name: 'Acme Holdings' });
      await expectRecordedAbout(renamed, 'customer.updated');
      expect((await api.get(`/customers/${created.body.record_id}`)).body.name).toBe('Acme Holdings');

      expectError(await inbound.send('customer.updated', { customer_name: 'Acme Corp', notes: 'x' }), 404, 'NOT_FOUND', 'data.customer_name');
      const again = await inbound.send('customer.updated', { customer_name: 'ACME HOLDINGS', notes: 'renamed' });
      await expectRecordedAbout(again, 'customer.updated');
      expect(again.body.record_id).toBe(created.body.record_id);
    });

    it('customer.updated answers 409 to a rename onto another customer\'s name, and changes nothing', async () => {
      const { inbound, api } = await company();
      await inbound.send('customer.created', { name: 'First Co' });
      const second = await inbound.send('customer.created', { name: 'Second Co' });
      const before = (await api.get(`/customers/${second.body.record_id}`)).body;
      expectError(await inbound.send('customer.updated', { customer_name: 'Second Co', name: 'FIRST CO' }), 409, 'CONFLICT', 'data.name');
      expect((await api.get(`/customers/${second.body.record_id}`)).body).toEqual(before);
    });

    it('customer.updated and customer.deleted of a customer that does not exist answer 404 naming data.customer_name and write nothing', async () => {
      const { tenant, inbound } = await company();
      await inbound.send('customer.created', { name: 'Real Co' });
      const events = (await outboxOf(stack, tenant.companyId)).length;
      expectError(await inbound.send('customer.updated', { customer_name: 'Ghost Co', phone: '1' }), 404, 'NOT_FOUND', 'data.customer_name');
      expectError(await inbound.send('customer.deleted', { customer_name: 'Ghost Co' }), 404, 'NOT_FOUND', 'data.customer_name');
      expect((await outboxOf(stack, tenant.companyId)).length).toBe(events);
      expect(await countRows(stack, 'customers', tenant.companyId)).toBe(1);
    });

    it('customer.deleted deletes the customer named ignoring case, with deleted_by the sending key', async () => {
      const { inbound, api } = await company();
      const created = await inbound.send('customer.created', { name: 'Acme Corp' });
      const response = await inbound.send('customer.deleted', { customer_name: '  acme CORP ' });
      const event = await expectRecordedAbout(response, 'customer.deleted');
      expect(response.body.record_id).toBe(created.body.record_id);
      expect(event.data).toEqual({ id: created.body.record_id, name: 'Acme Corp', deleted_at: expect.any(String), deleted_by: response.sentWith.apiKeyId });
      expect((await api.get(`/customers/${created.body.record_id}`)).status).toBe(404);
    });

    it('customer.deleted cascades to locations and contacts, and is refused (409) while the customer has projects', async () => {
      const { tenant, inbound, api } = await company();
      await inbound.send('customer.created', { name: 'Cascade Co' });
      const site = await inbound.send('location.created', { customer_name: 'Cascade Co', name: 'Yard' });
      const person = await inbound.send('contact.created', { customer_name: 'Cascade Co', first_name: 'Cas', last_name: 'Cade', location_name: 'Yard' });
      const response = await inbound.send('customer.deleted', { customer_name: 'cascade co' });
      await expectRecordedAbout(response, 'customer.deleted');
      expect((await api.get(`/locations/${site.body.record_id}`)).status).toBe(404);
      expect((await api.get(`/contacts/${person.body.record_id}`)).status).toBe(404);
      const types = (await outboxOf(stack, tenant.companyId)).map((e) => e.event_type);
      expect(types.slice(-3).sort()).toEqual(['contact.deleted', 'customer.deleted', 'location.deleted']);

      await seedProject(stack, tenant);
      expectError(await inbound.send('customer.deleted', { customer_name: 'SEED customer' }), 409, 'CONFLICT', null);
      expect((await api.get('/customers?name=Seed%20Customer')).body.data).toHaveLength(1);
    });

    it('customer.created answers 409 naming data.name to a name that differs only in case, and 400 naming a bad field', async () => {
      const { tenant, inbound } = await company();
      await inbound.send('customer.created', { name: 'Acme Corp' });
      expectError(await inbound.send('customer.created', { name: 'acme CORP' }), 409, 'CONFLICT', 'data.name');
      expectError(await inbound.send('customer.created', { name: 'Mail Co', email: 'nope' }), 400, 'INVALID_REQUEST', 'data.email');
      expectError(await inbound.send('customer.created', { type: 'commercial' }), 400, 'INVALID_REQUEST', 'data.name');
      expectError(await inbound.send('customer.created', { name: 'Nul\u0000 Co' }), 400, 'INVALID_REQUEST', 'data.name');
      expectError(await inbound.send('customer.updated', { name: 'No Key Co' }), 400, 'INVALID_REQUEST', 'data.customer_name');
      expect(await countRows(stack, 'customers', tenant.companyId)).toBe(1);
    });
  });

  describe('REST and inbound see the same records, matched the same way', () => {
    it('inbound finds a customer REST created as "Acme" by "acme", and REST finds what inbound changed', async () => {
      const { inbound, api } = await company();
      const created = await api.create('customers', { name: 'Acme' });
      const response = await inbound.send('customer.updated', { customer_name: 'acme', status: 'Inactive' });
      await expectRecordedAbout(response, 'customer.updated');
      expect(response.body.record_id).toBe(created.id);
      expect((await api.get('/customers?name=ACME')).body.data).toEqual([expect.objectContaining({ id: created.id, status: 'Inactive' })]);
    });

    it('REST refuses (409) a customer inbound created under another case, and inbound refuses one REST created', async () => {
      const { inbound, api } = await company();
      await inbound.send('customer.created', { name: 'Inbound Made' });
      expect((await api.post('/customers', { name: 'INBOUND MADE' })).status).toBe(409);
      await api.create('customers', { name: 'Rest Made' });
      expectError(await inbound.send('customer.created', { name: 'rest made' }), 409, 'CONFLICT', 'data.name');
    });

    it('creates one customer when two inbound creates of the same name arrive at once (200 and 409)', async () => {
      const { tenant, inbound } = await company();
      const responses = await Promise.all([inbound.send('customer.created', { name: 'Twin Co' }), inbound.send('customer.created', { name: 'TWIN CO' })]);
      expect(responses.map((r) => r.status).sort()).toEqual([200, 409]);
      expect(await countRows(stack, 'customers', tenant.companyId)).toBe(1);
      expect((await outboxOf(stack, tenant.companyId)).map((e) => e.event_type)).toEqual(['customer.created']);
    });

    it('creates one vendor when a REST create and an inbound create of the same name arrive at once', async () => {
      const { tenant, inbound, api } = await company();
      const [viaRest, viaInbound] = await Promise.all([api.post('/vendors', { vendor_name: 'Race Supply' }), inbound.send('vendor.created', { vendor_name: 'race supply' })]);
      // One wins (REST 201 or inbound 200), the other is a 409.
      expect([[201, 409], [409, 200]]).toContainEqual([viaRest.status, viaInbound.status]);
      expect(await countRows(stack, 'vendors', tenant.companyId)).toBe(1);
    });

    it('inbound finds locations, contacts and vendors REST created, ignoring case', async () => {
      const { inbound, api } = await company();
      const customer = await api.create('customers', { name: 'Mixed Co' });
      const site = await api.create('locations', { customer_id: customer.id, name: 'Main Yard' });
      const person = await api.create('contacts', { customer_id: customer.id, first_name: 'Jo', last_name: 'Smith' });
      const vendor = await api.create('vendors', { vendor_name: 'Apex Electric' });

      const location = await inbound.send('location.updated', { customer_name: 'MIXED co', location_name: 'main yard', city: 'Calgary' });
      expect(location.body.record_id).toBe(site.id);
      const contact = await inbound.send('contact.updated', { customer_name: 'mixed CO', first_name: 'JO', last_name: 'smith', title: 'Boss' });
      expect(contact.body.record_id).toBe(person.id);
      const supplier = await inbound.send('vendor.updated', { vendor_name: 'apex ELECTRIC', rating: 4 });
      expect(supplier.body.record_id).toBe(vendor.id);

      expect((await api.get(`/locations/${site.id}`)).body.city).toBe('Calgary');
      expect((await api.get(`/contacts/${person.id}`)).body.title).toBe('Boss');
      expect((await api.get(`/vendors/${vendor.id}`)).body.rating).toBe(4);
    });
  });

  describe('location.*', () => {
    it('location.created creates a location of the customer named (ignoring case)', async () => {
      const { inbound, api } = await company();
      const customer = await inbound.send('customer.created', { name: 'Site Owner' });
      const response = await inbound.send('location.created', {
        customer_name: 'SITE owner',
        name: 'Riverside Lot 7',
        address_line_1: '700 Riverside Dr',
        city: 'Calgary',
        province: 'AB',
        postal_code: 'T2P 1A1',
        country: 'CA',
        coordinates: { latitude: 51.05, longitude: -114.07 },
      });
      const event = await expectRecordedAbout(response, 'location.created');
      expect(event.data).toMatchObject({ customer_id: customer.body.record_id, customer: { id: customer.body.record_id, name: 'Site Owner' }, coordinates: { latitude: 51.05, longitude: -114.07 } });
      expect((await api.get(`/locations/${response.body.record_id}`)).body).toMatchObject({ customer_id: customer.body.record_id, name: 'Riverside Lot 7', city: 'Calgary' });
    });

    it('location.created answers 400 naming data.customer_name when no customer has that name, and writes nothing', async () => {
      const { tenant, inbound } = await company();
      expectError(await inbound.send('location.created', { customer_name: 'Nobody', name: 'Somewhere' }), 400, 'INVALID_REQUEST', 'data.customer_name');
      expectError(await inbound.send('location.created', { name: 'Somewhere' }), 400, 'INVALID_REQUEST', 'data.customer_name');
      expect(await countRows(stack, 'locations', tenant.companyId)).toBe(0);
      expect(await outboxOf(stack, tenant.companyId)).toEqual([]);
    });

    it('location.created answers 409 naming data.name to a name the customer already has in another case', async () => {
      const { inbound } = await company();
      await inbound.send('customer.created', { name: 'Owner' });
      await inbound.send('location.created', { customer_name: 'Owner', name: 'Yard' });
      expectError(await inbound.send('location.created', { customer_name: 'Owner', name: 'YARD' }), 409, 'CONFLICT', 'data.name');
    });

    it('location.updated finds the location by customer_name and location_name ignoring case, and renames it with name', async () => {
      const { inbound, api } = await company();
      await inbound.send('customer.created', { name: 'Owner' });
      const created = await inbound.send('location.created', { customer_name: 'Owner', name: 'Old Yard', city: 'Calgary' });
      const response = await inbound.send('location.updated', { customer_name: 'owner', location_name: 'OLD yard', name: 'New Yard', phone: '403-555-0100' });
      const event = await expectRecordedAbout(response, 'location.updated');
      expect(response.body.record_id).toBe(created.body.record_id);
      expect(event.data).toMatchObject({ name: 'New Yard', city: 'Calgary', updated_by: response.sentWith.apiKeyId });
      expect((await api.get(`/locations/${created.body.record_id}`)).body).toMatchObject({ name: 'New Yard', phone: '403-555-0100', city: 'Calgary' });
    });

    it('location.updated and location.deleted answer 404 naming data.location_name when the location or its customer does not exist', async () => {
      const { tenant, inbound } = await company();
      await inbound.send('customer.created', { name: 'Owner' });
      await inbound.send('location.created', { customer_name: 'Owner', name: 'Yard' });
      const events = (await outboxOf(stack, tenant.companyId)).length;
      expectError(await inbound.send('location.updated', { customer_name: 'Owner', location_name: 'Ghost Yard', city: 'X' }), 404, 'NOT_FOUND', 'data.location_name');
      expectError(await inbound.send('location.updated', { customer_name: 'Ghost Owner', location_name: 'Yard', city: 'X' }), 404, 'NOT_FOUND', 'data.location_name');
      expectError(await inbound.send('location.deleted', { customer_name: 'Owner', location_name: 'Ghost Yard' }), 404, 'NOT_FOUND', 'data.location_name');
      expectError(await inbound.send('location.deleted', { customer_name: 'Owner' }), 400, 'INVALID_REQUEST', 'data.location_name');
      expect((await outboxOf(stack, tenant.companyId)).length).toBe(events);
    });

    it('location.deleted deletes it with deleted_by, and is refused (409) for a location with projects', async () => {
      const { tenant, inbound, api } = await company();
      await inbound.send('customer.created', { name: 'Owner' });
      const created = await inbound.send('location.created', { customer_name: 'Owner', name: 'Yard' });
      const response = await inbound.send('location.deleted', { customer_name: 'OWNER', location_name: 'yard' });
      const event = await expectRecordedAbout(response, 'location.deleted');
      expect(event.data).toEqual({ id: created.body.record_id, customer_id: expect.any(String), name: 'Yard', deleted_at: expect.any(String), deleted_by: response.sentWith.apiKeyId });
      expect((await api.get(`/locations/${created.body.record_id}`)).status).toBe(404);

      await seedProject(stack, tenant);
      expectError(await inbound.send('location.deleted', { customer_name: 'Seed Customer', location_name: 'seed site' }), 409, 'CONFLICT', null);
    });
  });

  describe('contact.*', () => {
    it('contact.created creates a contact of the customer, at the location named', async () => {
      const { inbound, api } = await company();
      const customer = await inbound.send('customer.created', { name: 'Owner' });
      const site = await inbound.send('location.created', { customer_name: 'Owner', name: 'Yard' });
      const response = await inbound.send('contact.created', {
        customer_name: 'owner',
        location_name: 'YARD',
        first_name: 'Morgan',
        last_name: 'Lee',
        title: 'Site Manager',
        email: 'morgan@owner.example',
        phone: '403-555-0100',
        phone_ext: '12',
        mobile: '403-555-0111',
        is_primary: true,
        contact_tags: ['site', 'billing'],
      });
      const event = await expectRecordedAbout(response, 'contact.created');
      expect(event.data).toMatchObject({ customer_id: customer.body.record_id, customer_name: 'Owner', first_name: 'Morgan', role: 'Site Manager', is_primary: true });
      expect((await api.get(`/contacts/${response.body.record_id}`)).body).toMatchObject({
        customer_id: customer.body.record_id,
        location_id: site.body.record_id,
        phone_ext: '12',
        contact_tags: ['site', 'billing'],
      });
    });

    it('contact.created answers 400 naming data.customer_name or data.location_name when they match nothing', async () => {
      const { tenant, inbound } = await company();
      await inbound.send('customer.created', { name: 'Owner' });
      expectError(await inbound.send('contact.created', { customer_name: 'Nobody', first_name: 'A', last_name: 'B' }), 400, 'INVALID_REQUEST', 'data.customer_name');
      expectError(await inbound.send('contact.created', { customer_name: 'Owner', first_name: 'A', last_name: 'B', location_name: 'Nowhere' }), 400, 'INVALID_REQUEST', 'data.location_name');
      expect(await countRows(stack, 'contacts', tenant.companyId)).toBe(0);
    });

    it('contact.created refuses a location of another customer of the company (400 naming data.location_name)', async () => {
      const { inbound } = await company();
      await inbound.send('customer.created', { name: 'Owner' });
      await inbound.send('customer.created', { name: 'Neighbour' });
      await inbound.send('location.created', { customer_name: 'Neighbour', name: 'Their Yard' });
      expectError(
        await inbound.send('contact.created', { customer_name: 'Owner', first_name: 'A', last_name: 'B', location_name: 'Their Yard' }),
        400,
        'INVALID_REQUEST',
        'data.location_name',
      );
    });

    it('contact.updated finds the contact by customer_name, first_name and last_name ignoring case; location_name null unlinks it', async () => {
      const { inbound, api } = await company();
      await inbound.send('customer.created', { name: 'Owner' });
      await inbound.send('location.created', { customer_name: 'Owner', name: 'Yard' });
      const created = await inbound.send('contact.created', { customer_name: 'Owner', first_name: 'Morgan', last_name: 'Lee', location_name: 'Yard', email: 'm@o.example' });
      const before = (await api.get(`/contacts/${created.body.record_id}`)).body;

      const response = await inbound.send('contact.updated', { customer_name: 'OWNER', first_name: 'morgan', last_name: 'LEE', title: 'Director', location_name: null });
      const event = await expectRecordedAbout(response, 'contact.updated');
      expect(response.body.record_id).toBe(created.body.record_id);
      expect(event.data).toMatchObject({ first_name: 'Morgan', title: 'Director', email: 'm@o.example', updated_by: response.sentWith.apiKeyId });
      expect((await api.get(`/contacts/${created.body.record_id}`)).body).toEqual({ ...before, title: 'Director', location_id: null, updated_at: expect.any(String) });
    });

    it('contact.updated and contact.deleted answer 404 naming data.first_name when no such contact exists', async () => {
      const { tenant, inbound } = await company();
      await inbound.send('customer.created', { name: 'Owner' });
      await inbound.send('contact.created', { customer_name: 'Owner', first_name: 'Morgan', last_name: 'Lee' });
      const events = (await outboxOf(stack, tenant.companyId)).length;
      expectError(await inbound.send('contact.updated', { customer_name: 'Owner', first_name: 'Morgan', last_name: 'Ghost', title: 'x' }), 404, 'NOT_FOUND', 'data.first_name');
      expectError(await inbound.send('contact.updated', { customer_name: 'Ghost Owner', first_name: 'Morgan', last_name: 'Lee', title: 'x' }), 404, 'NOT_FOUND', 'data.first_name');
      expectError(await inbound.send('contact.deleted', { customer_name: 'Owner', first_name: 'Nobody', last_name: 'Lee' }), 404, 'NOT_FOUND', 'data.first_name');
      expectError(await inbound.send('contact.deleted', { customer_name: 'Owner', first_name: 'Morgan' }), 400, 'INVALID_REQUEST', 'data.last_name');
      expect((await outboxOf(stack, tenant.companyId)).length).toBe(events);
    });

    it('contact.deleted deletes the contact with deleted_by the sending key', async () => {
      const { inbound, api } = await company();
      await inbound.send('customer.created', { name: 'Owner' });
      const created = await inbound.send('contact.created', { customer_name: 'Owner', first_name: 'Morgan', last_name: 'Lee' });
      const response = await inbound.send('contact.deleted', { customer_name: 'owner', first_name: 'MORGAN', last_name: 'lee' });
      const event = await expectRecordedAbout(response, 'contact.deleted');
      expect(event.data).toEqual({
        id: created.body.record_id,
        customer_id: expect.any(String),
        first_name: 'Morgan',
        last_name: 'Lee',
        deleted_at: expect.any(String),
        deleted_by: response.sentWith.apiKeyId,
      });
      expect((await api.get(`/contacts/${created.body.record_id}`)).status).toBe(404);
    });
  });

  describe('vendor.*', () => {
    it('vendor.created takes trade_specialty as a comma-separated string, one combined address and a full state name', async () => {
      const { inbound, api } = await company();
      const response = await inbound.send('vendor.created', {
        vendor_name: 'Apex Electric',
        type: 'subcontractor',
        trade_specialty: 'Electrical, Low voltage',
        address: '12 Main St, Suite 4, Springfield, illinois 62704, USA',
        rating: 4.5,
        regions: ['West'],
        custom_fields: { crew_size: 12 },
        insurance_expiry_date: '2027-12-31',
      });
      const event = await expectRecordedAbout(response, 'vendor.created');
      expect(event.data).toMatchObject({
        vendor_name: 'Apex Electric',
        trade_specialty: 'Electrical, Low voltage',
        address: { address_line_1: '12 Main St', city: 'Springfield', province: 'IL', postal_code: '62704', country: 'USA' },
      });
      expect((await api.get(`/vendors/${response.body.record_id}`)).body).toMatchObject({
        trade_specialty: ['Electrical', 'Low voltage'],
        address: '12 Main St',
        address_line2: 'Suite 4',
        city: 'Springfield',
        state: 'IL',
        zip_code: '62704',
        country: 'USA',
        rating: 4.5,
        custom_fields: { crew_size: 12 },
      });
    });

    it('vendor.created takes trade_specialty as a list and separate address fields with a province name', async () => {
      const { inbound, api } = await company();
      const response = await inbound.send('vendor.created', {
        vendor_name: 'Maple Masonry',
        trade_specialty: ['Masonry', 'Concrete'],
        address: '200 Bay St',
        city: 'Toronto',
        state: 'Ontario',
        zip_code: 'M5J 2J2',
        country: 'Canada',
      });
      await expectRecordedAbout(response, 'vendor.created');
      expect((await api.get(`/vendors/${response.body.record_id}`)).body).toMatchObject({
        trade_specialty: ['Masonry', 'Concrete'],
        address: '200 Bay St',
        city: 'Toronto',
        state: 'ON',
        zip_code: 'M5J 2J2',
      });
    });

    it('vendor.created answers 400 naming the field to a bad state, a rating of 5.1 or an unknown type, and 409 to a known name', async () => {
      const { tenant, inbound } = await company();
      await inbound.send('vendor.created', { vendor_name: 'Apex Electric' });
      expectError(await inbound.send('vendor.created', { vendor_name: 'Bad State', state: 'Narnia' }), 400, 'INVALID_REQUEST', 'data.state');
      expectError(await inbound.send('vendor.created', { vendor_name: 'Bad Rating', rating: 5.1 }), 400, 'INVALID_REQUEST', 'data.rating');
      expectError(await inbound.send('vendor.created', { vendor_name: 'Bad Type', type: 'plumber' }), 400, 'INVALID_REQUEST', 'data.type');
      expectError(await inbound.send('vendor.created', { vendor_name: 'Bad Date', compliance_expiry_date: '2026-02-30' }), 400, 'INVALID_REQUEST', 'data.compliance_expiry_date');
      expectError(await inbound.send('vendor.created', { vendor_name: 'Bad Address', address: 'Here, There' }), 400, 'INVALID_REQUEST', 'data.address');
      expectError(await inbound.send('vendor.created', { vendor_name: 'APEX electric' }), 409, 'CONFLICT', 'data.vendor_name');
      expect(await countRows(stack, 'vendors', tenant.companyId)).toBe(1);
    });

    it('vendor.updated finds the vendor by vendor_name ignoring case and applies the input forms', async () => {
      const { inbound, api } = await company();
      const created = await inbound.send('vendor.created', { vendor_name: 'Apex Electric', rating: 4, state: 'IL', trade_specialty: ['Electrical'] });
      const response = await inbound.send('vendor.updated', { vendor_name: 'APEX electric', rating: 4.8, state: 'ontario', trade_specialty: 'Electrical, HVAC' });
      const event = await expectRecordedAbout(response, 'vendor.updated');
      expect(response.body.record_id).toBe(created.body.record_id);
      expect(event.data.changes).toEqual({
        rating: { old: 4, new: 4.8 },
        state: { old: 'IL', new: 'ON' },
        trade_specialty: { old: ['Electrical'], new: ['Electrical', 'HVAC'] },
      });
      expect((await api.get(`/vendors/${created.body.record_id}`)).body).toMatchObject({ vendor_name: 'Apex Electric', rating: 4.8, state: 'ON', trade_specialty: ['Electrical', 'HVAC'] });
    });

    it('vendor.updated and vendor.deleted answer 404 naming data.vendor_name for a vendor that does not exist', async () => {
      const { tenant, inbound } = await company();
      await inbound.send('vendor.created', { vendor_name: 'Apex Electric' });
      const events = (await outboxOf(stack, tenant.companyId)).length;
      expectError(await inbound.send('vendor.updated', { vendor_name: 'Ghost Supply', rating: 3 }), 404, 'NOT_FOUND', 'data.vendor_name');
      expectError(await inbound.send('vendor.deleted', { vendor_name: 'Ghost Supply' }), 404, 'NOT_FOUND', 'data.vendor_name');
      expect((await outboxOf(stack, tenant.companyId)).length).toBe(events);
    });

    it('vendor.deleted deletes the vendor with deleted_by the sending key', async () => {
      const { inbound, api } = await company();
      const created = await inbound.send('vendor.created', { vendor_name: 'Apex Electric' });
      const response = await inbound.send('vendor.deleted', { vendor_name: 'apex electric' });
      const event = await expectRecordedAbout(response, 'vendor.deleted');
      expect(event.data).toEqual({ id: created.body.record_id, vendor_name: 'Apex Electric', deleted_at: expect.any(String), deleted_by: response.sentWith.apiKeyId });
      expect((await api.get(`/vendors/${created.body.record_id}`)).status).toBe(404);
    });

    it('an update that changes nothing answers 200 and records no event', async () => {
      const { tenant, inbound } = await company();
      await inbound.send('vendor.created', { vendor_name: 'Apex Electric', state: 'IL', rating: 4, trade_specialty: ['Electrical'] });
      const events = (await outboxOf(stack, tenant.companyId)).length;
      const response = await inbound.send('vendor.updated', { vendor_name: 'Apex Electric', state: 'Illinois', rating: 4, trade_specialty: 'Electrical' });
      expect(response.status).toBe(200);
      expect((await outboxOf(stack, tenant.companyId)).length).toBe(events);
    });
  });

  describe('echo prevention (webhooks.md 4)', () => {
    const receivers: TestReceiver[] = [];
    afterAll(() => Promise.all(receivers.map((r) => r.close())));

    async function endpointOf(owner: Tenant) {
      const receiver = await startReceiver();
      receivers.push(receiver);
      const endpoint = await registerEndpoint(stack, owner.key, { url: receiver.url, event_types: ['customer.*', 'location.*', 'contact.*', 'vendor.*'] });
      return { receiver, endpoint };
    }

    const eventIdsOf = (receiver: TestReceiver) => receiver.requests.map((r) => JSON.parse(r.body).event_id as string);

    it("does not deliver an inbound change to the endpoint of the key that sent it, while the other key's endpoint gets it", async () => {
      const sender = await createTenant(stack.orm, ['admin']);
      const other = await addApiKey(stack, sender, ['admin']);
      const own = await endpointOf(sender);
      const theirs = await endpointOf(other);

      const changes = [
        ['customer.created', { name: 'Echo Co' }],
        ['location.created', { customer_name: 'Echo Co', name: 'Echo Yard' }],
        ['contact.created', { customer_name: 'Echo Co', first_name: 'Eco', last_name: 'Lee' }],
        ['vendor.created', { vendor_name: 'Echo Supply' }],
        ['vendor.updated', { vendor_name: 'echo supply', rating: 3 }],
        ['customer.deleted', { customer_name: 'echo co' }],
      ] as const;
      const sent: string[] = [];
      for (const [type, data] of changes) {
        const response = await sendInbound(stack.baseUrl, sender, envelope(type, data));
        expect({ type, status: response.status }).toEqual({ type, status: 200 });
        sent.push(response.body.event_id);
      }
      // The customer delete also deleted its location and contact, each an event of its own.
      const events = (await outboxOf(stack, sender.companyId)).map((e) => e.id);
      expect(events).toHaveLength(changes.length + 2);
      expect(events).toEqual(expect.arrayContaining(sent));

      await theirs.receiver.waitForRequests(events.length, 30_000);
      expect(eventIdsOf(theirs.receiver).sort()).toEqual([...events].sort());
      // Deliveries of one event are created together: once the other endpoint has all of them, none is coming for ours.
      await waitFor(async () => (await deliveriesOf(stack, other.key, theirs.endpoint.id)).length === events.length);
      expect(await deliveriesOf(stack, sender.key, own.endpoint.id)).toEqual([]);
      expect(own.receiver.requests).toEqual([]);

      // A change sent with the other key reaches the first key's endpoint, and not its own.
      const back = await sendInbound(stack.baseUrl, other, envelope('vendor.created', { vendor_name: 'Return Supply' }));
      expect(back.status).toBe(200);
      await own.receiver.waitForRequests(1, 30_000);
      expect(eventIdsOf(own.receiver)).toEqual([back.body.event_id]);
      await waitFor(async () => (await deliveriesOf(stack, sender.key, own.endpoint.id)).length === 1);
      expect((await deliveriesOf(stack, other.key, theirs.endpoint.id)).map((d) => d.event_id)).not.toContain(back.body.event_id);
    });
  });
});
