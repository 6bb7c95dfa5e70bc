import { restClient, unique } from '../../helpers/api-client';
import { countRows } from '../../helpers/fixtures';
import { createTenant, startStack, type TestStack } from '../../helpers/stack';
import { crudSuite, type CrudFixture } from './crud-suite';

const vendorsFixture: CrudFixture = {
  collection: 'vendors',
  table: 'vendors',
  keyFields: ['vendor_name'],
  parents: async () => ({}),
  body: (_, tag) => ({
    vendor_name: `Vendor ${tag}`,
    type: 'subcontractor',
    trade_specialty: ['Electrical', 'Low voltage'],
    primary_contact_name: 'Priya Nair',
    primary_contact_email: `priya.${tag}@example.com`,
    primary_contact_phone: '905-555-0123',
    address: '12 Main St',
    address_line2: 'Suite 4',
    city: 'Springfield',
    state: 'IL',
    zip_code: '62704',
    country: 'USA',
    approval_status: 'approved',
    rating: 4.5,
    regions: ['West', 'North'],
    notes: 'Union shop',
    insurance_expiry_date: '2027-12-31',
    compliance_expiry_date: '2027-03-31',
    certifications: ['ISO 9001'],
    custom_fields: { crew_size: 12, bonded: true, code: 'A1', legacy: null },
  }),
  listRecords: () => [
    {
      vendor_name: 'Apex Electric',
      type: 'subcontractor',
      approval_status: 'approved',
      trade_specialty: ['Electrical', 'Low voltage'],
      regions: ['West', 'North'],
      state: 'IL',
      rating: 4.5,
      insurance_expiry_date: '2027-01-31',
      compliance_expiry_date: '2026-12-31',
      certifications: ['ISO 9001'],
      custom_fields: { crew: 4, union: true, note: 'night work' },
    },
    { vendor_name: 'Brick Supply', type: 'supplier', approval_status: 'pending', trade_specialty: ['Masonry'], regions: ['West'], state: 'ON' },
    { vendor_name: 'Civil Consult', type: 'consultant', state: 'il' },
    { vendor_name: 'Apex Electrical', type: 'subcontractor', approval_status: 'approved', trade_specialty: ['electrical'], regions: ['East'] },
  ],
  filters: [
    { query: () => 'vendor_name=APEX%20electric', expect: [0] },
    // `_` is a plain character, not LIKE's any-one-character (which would match Apex Electrical).
    { query: () => 'vendor_name=Apex%20Electrica_', expect: [] },
    { query: () => 'type=subcontractor', expect: [0, 3] },
    { query: () => 'type=supplier', expect: [1] },
    { query: () => 'approval_status=approved', expect: [0, 3] },
    { query: () => 'approval_status=pending', expect: [1] },
    // Trades and regions match exactly.
    { query: () => 'trade_specialty=Electrical', expect: [0] },
    { query: () => 'trade_specialty=Masonry', expect: [1] },
    { query: () => 'region=West', expect: [0, 1] },
    { query: () => 'region=East', expect: [3] },
    { query: () => 'state=il', expect: [0, 2] },
    { query: () => 'state=ON', expect: [1] },
    { query: () => 'type=subcontractor&region=West&state=IL', expect: [0] },
  ],
  update: { patch: { rating: 3.5, notes: 'Reliable', regions: ['East'], approval_status: 'suspended', insurance_expiry_date: '2028-01-31' }, clear: 'primary_contact_email' },
  textField: 'vendor_name',
  invalid: [
    { what: 'no vendor_name', on: 'create', body: () => ({ type: 'supplier' }), field: 'vendor_name' },
    { what: 'a type not in the list', on: 'create', body: () => ({ vendor_name: `V ${unique()}`, type: 'plumber' }), field: 'type' },
    { what: 'an approval_status not in the list', on: 'update', body: () => ({ approval_status: 'maybe' }), field: 'approval_status' },
    { what: 'a rating of 5.1', on: 'create', body: () => ({ vendor_name: `V ${unique()}`, rating: 5.1 }), field: 'rating' },
    { what: 'a negative rating', on: 'update', body: () => ({ rating: -0.5 }), field: 'rating' },
    { what: 'a rating as text', on: 'update', body: () => ({ rating: '4' }), field: 'rating' },
    { what: 'a state that is neither a code nor a name', on: 'create', body: () => ({ vendor_name: `V ${unique()}`, state: 'Narnia' }), field: 'state' },
    { what: 'a state that is neither a code nor a name', on: 'update', body: () => ({ state: 'Atlantis' }), field: 'state' },
    { what: 'February 30th', on: 'create', body: () => ({ vendor_name: `V ${unique()}`, insurance_expiry_date: '2026-02-30' }), field: 'insurance_expiry_date' },
    { what: 'year 0000', on: 'update', body: () => ({ compliance_expiry_date: '0000-01-01' }), field: 'compliance_expiry_date' },
    { what: 'month 13', on: 'update', body: () => ({ insurance_expiry_date: '2026-13-01' }), field: 'insurance_expiry_date' },
    { what: 'a date with a time', on: 'update', body: () => ({ insurance_expiry_date: '2026-03-01T00:00:00Z' }), field: 'insurance_expiry_date' },
    { what: 'trade_specialty as a number', on: 'update', body: () => ({ trade_specialty: 5 }), field: 'trade_specialty' },
    { what: 'regions as a string', on: 'update', body: () => ({ regions: 'West' }), field: 'regions' },
    { what: 'a custom field holding an object', on: 'update', body: () => ({ custom_fields: { nested: { a: 1 } } }), field: 'custom_fields.nested' },
    { what: 'a combined address that cannot be split', on: 'create', body: () => ({ vendor_name: `V ${unique()}`, address: 'Somewhere, Nowhere' }), field: 'address' },
    { what: 'a zip code over 20 characters', on: 'update', body: () => ({ zip_code: '1'.repeat(21) }), field: 'zip_code' },
  ],
};

describe('REST /vendors', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ worker: false });
  });
  afterAll(() => stack.close());

  crudSuite(vendorsFixture, () => stack);

  describe('vendor input forms (webhooks.md 2.5)', () => {
    const vendor = async (body: Record<string, unknown>) => {
      const api = restClient(stack, await createTenant(stack.orm));
      const response = await api.post('/vendors', { vendor_name: `Form ${unique()}`, ...body });
      return { api, response };
    };

    it('takes trade_specialty as a list', async () => {
      const { response } = await vendor({ trade_specialty: ['Electrical', 'Low voltage'] });
      expect(response.status).toBe(201);
      expect(response.body.trade_specialty).toEqual(['Electrical', 'Low voltage']);
    });

    it('takes trade_specialty as one comma-separated string, trimmed, without blanks or repeats', async () => {
      const { response } = await vendor({ trade_specialty: 'Electrical, Low voltage,, electrical ,HVAC' });
      expect(response.status).toBe(201);
      expect(response.body.trade_specialty).toEqual(['Electrical', 'Low voltage', 'HVAC']);
    });

    it('splits a combined address into address, address_line2, city, state, zip_code and country', async () => {
      const { response } = await vendor({ address: '12 Main St, Suite 4, Springfield, IL 62704, USA' });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({ address: '12 Main St', address_line2: 'Suite 4', city: 'Springfield', state: 'IL', zip_code: '62704', country: 'USA' });
    });

    it('splits a combined Canadian address with a full province name', async () => {
      const { response } = await vendor({ address: '200 Bay St, Toronto, Ontario M5J 2J2' });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({ address: '200 Bay St', address_line2: null, city: 'Toronto', state: 'ON', zip_code: 'M5J 2J2', country: null });
    });

    it('keeps a street line with commas as it is when city, state or zip_code are given separately', async () => {
      const { response } = await vendor({ address: '12 Main St, Suite 4', city: 'Springfield', state: 'IL', zip_code: '62704' });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({ address: '12 Main St, Suite 4', address_line2: null, city: 'Springfield', state: 'IL', zip_code: '62704' });
    });

    it('splits a combined address given in an update', async () => {
      const { api, response } = await vendor({ address: '1 Old Rd', city: 'Oldtown', state: 'TX', zip_code: '75001' });
      const updated = await api.put(`/vendors/${response.body.id}`, { address: '9 New Ave, Peoria, Illinois 61602' });
      expect(updated.status).toBe(200);
      expect(updated.body).toMatchObject({ address: '9 New Ave', city: 'Peoria', state: 'IL', zip_code: '61602' });
    });

    it.each([
      ['illinois', 'IL'],
      ['Illinois', 'IL'],
      ['Ontario', 'ON'],
      ['british columbia', 'BC'],
      ['il', 'IL'],
      ['District of Columbia', 'DC'],
    ])('stores state %s as %s', async (state, code) => {
      const { api, response } = await vendor({ state });
      expect(response.status).toBe(201);
      expect(response.body.state).toBe(code);
      expect((await api.get(`/vendors?state=${code}`)).body.data.map((v: { id: string }) => v.id)).toEqual([response.body.id]);
    });

    it('normalises a full state name given in an update too', async () => {
      const { api, response } = await vendor({ state: 'IL' });
      const updated = await api.put(`/vendors/${response.body.id}`, { state: 'quebec' });
      expect(updated.body.state).toBe('QC');
    });

    it.each([0, 5, 2.75])('accepts a rating of %s', async (rating) => {
      const { response } = await vendor({ rating });
      expect(response.status).toBe(201);
      expect(response.body.rating).toBe(rating);
    });

    it('defaults the lists to empty and custom_fields to an empty object', async () => {
      const { response } = await vendor({});
      expect(response.body).toMatchObject({ trade_specialty: [], regions: [], certifications: [], custom_fields: {}, type: null, rating: null });
    });

    it('splits a combined address that ends with a 2-letter country code', async () => {
      const { response } = await vendor({ address: '12 Main St, Springfield, IL 62704, US' });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({ address: '12 Main St', address_line2: null, city: 'Springfield', state: 'IL', zip_code: '62704', country: 'US' });
    });

    it('answers 400 naming state to a 2-letter code no state or province has', async () => {
      const { response } = await vendor({ state: 'ZZ' });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'state' } });
    });

    it('applies the bounds of the list form to trades given as one string', async () => {
      const { response } = await vendor({ trade_specialty: `Electrical, ${'x'.repeat(300)}` });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: expect.stringMatching(/^trade_specialty/) } });
    });

    it('answers 400 naming custom_fields to a custom field name holding a NUL character, never 500', async () => {
      const { response } = await vendor({ custom_fields: { 'bad\u0000name': 'x' } });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: expect.stringMatching(/^custom_fields/) } });
    });

    it('deletes its vendor locations with it', async () => {
      const tenant = await createTenant(stack.orm);
      const api = restClient(stack, tenant);
      const doomed = await api.create('vendors', { vendor_name: 'Doomed Supply' });
      const kept = await api.create('vendors', { vendor_name: 'Kept Supply' });
      const yard = await api.create('vendor-locations', { vendor_id: doomed.id, name: 'Yard' });
      const keptYard = await api.create('vendor-locations', { vendor_id: kept.id, name: 'Yard' });
      expect((await api.delete(`/vendors/${doomed.id}`)).status).toBe(204);
      expect((await api.get(`/vendor-locations/${yard.id}`)).status).toBe(404);
      expect((await api.get(`/vendor-locations/${keptYard.id}`)).status).toBe(200);
      expect(await countRows(stack, 'vendor_locations', tenant.companyId)).toBe(1);
    });
  });
});
