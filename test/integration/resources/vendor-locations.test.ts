import { restClient, unknownId } from '../../helpers/api-client';
import { outboxOf } from '../../helpers/fixtures';
import { createTenant, startStack, type TestStack } from '../../helpers/stack';
import { crudSuite, type CrudFixture } from './crud-suite';

const vendorLocationsFixture: CrudFixture = {
  collection: 'vendor-locations',
  table: 'vendor_locations',
  keyFields: ['name'],
  parents: async ({ api }) => ({
    vendor: (await api.create('vendors', { vendor_name: 'Parent Supply' })).id,
    otherVendor: (await api.create('vendors', { vendor_name: 'Other Supply' })).id,
  }),
  body: (p, tag) => ({
    vendor_id: p.vendor,
    name: `Yard ${tag}`,
    address_line_1: '1 Depot Rd',
    address_line_2: 'Gate B',
    city: 'Springfield',
    state: 'IL',
    postal_code: '62704',
    country: 'USA',
    phone: '217-555-0100',
    email: `yard.${tag}@example.com`,
    is_primary: false,
    notes: 'Open 7 to 5',
    coordinates: { latitude: 39.78, longitude: -89.65 },
  }),
  listRecords: (p) => [
    { vendor_id: p.vendor, name: 'Main Yard', city: 'Springfield', state: 'IL', is_primary: true, coordinates: { latitude: 39.78, longitude: -89.65 } },
    { vendor_id: p.vendor, name: 'Branch', city: 'Chicago', state: 'Illinois' },
    // The same name under another vendor is another site.
    { vendor_id: p.otherVendor, name: 'main yard', city: 'springfield', state: 'ON', is_primary: true },
    { vendor_id: p.otherVendor, name: 'Annex', city: 'Toronto', state: 'ontario' },
  ],
  filters: [
    { query: (p) => `vendor_id=${p.vendor}`, expect: [0, 1] },
    { query: (p) => `vendor_id=${p.otherVendor}`, expect: [2, 3] },
    { query: () => `vendor_id=${unknownId()}`, expect: [] },
    { query: () => 'city=SPRINGFIELD', expect: [0, 2] },
    { query: () => 'city=Spring%25', expect: [] },
    // Full names were stored as codes.
    { query: () => 'state=il', expect: [0, 1] },
    { query: () => 'state=ON', expect: [2, 3] },
    { query: () => 'is_primary=true', expect: [0, 2] },
    { query: () => 'is_primary=false', expect: [1, 3] },
    { query: (p) => `vendor_id=${p.vendor}&is_primary=false`, expect: [1] },
  ],
  update: { patch: { city: 'Peoria', phone: '309-555-0100', postal_code: '61602' }, clear: 'email' },
  textField: 'name',
  invalid: [
    { what: 'no vendor_id', on: 'create', body: () => ({ name: 'Orphan Yard' }), field: 'vendor_id' },
    { what: 'a vendor_id no vendor has', on: 'create', body: () => ({ vendor_id: unknownId(), name: 'Ghost Yard' }), field: 'vendor_id' },
    { what: 'a vendor_id (it cannot change)', on: 'update', body: (p) => ({ vendor_id: p.otherVendor }), field: 'vendor_id' },
    { what: 'a state that is neither a code nor a name', on: 'create', body: (p) => ({ vendor_id: p.vendor, name: 'Lost Yard', state: 'Atlantis' }), field: 'state' },
    { what: 'a state that is neither a code nor a name', on: 'update', body: () => ({ state: 'Middle Earth' }), field: 'state' },
    { what: 'an e-mail that is not one', on: 'update', body: () => ({ email: 'yard@' }), field: 'email' },
    { what: 'a longitude past 180', on: 'update', body: () => ({ coordinates: { latitude: 0, longitude: 180.5 } }), field: 'coordinates.longitude' },
    { what: 'is_primary as text', on: 'update', body: () => ({ is_primary: 'true' }), field: 'is_primary' },
    { what: 'a postal code over 20 characters', on: 'update', body: () => ({ postal_code: '6'.repeat(21) }), field: 'postal_code' },
  ],
};

describe('REST /vendor-locations', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ worker: false });
  });
  afterAll(() => stack.close());

  crudSuite(vendorLocationsFixture, () => stack);

  describe('vendor location specifics', () => {
    const primaries = async (api: ReturnType<typeof restClient>, vendorId: string) =>
      (await api.get(`/vendor-locations?vendor_id=${vendorId}&is_primary=true`)).body.data.map((l: { id: string }) => l.id);

    it("keeps one primary site per vendor: marking one clears the vendor's others, not other vendors'", async () => {
      const api = restClient(stack, await createTenant(stack.orm));
      const vendor = await api.create('vendors', { vendor_name: 'Primary Supply' });
      const other = await api.create('vendors', { vendor_name: 'Other Supply' });
      const first = await api.create('vendor-locations', { vendor_id: vendor.id, name: 'First', is_primary: true });
      const theirs = await api.create('vendor-locations', { vendor_id: other.id, name: 'Theirs', is_primary: true });
      expect(await primaries(api, vendor.id)).toEqual([first.id]);

      // Created as primary: the first one is cleared.
      const second = await api.create('vendor-locations', { vendor_id: vendor.id, name: 'Second', is_primary: true });
      expect(await primaries(api, vendor.id)).toEqual([second.id]);
      expect((await api.get(`/vendor-locations/${first.id}`)).body.is_primary).toBe(false);

      // Updated to primary: the second one is cleared.
      const moved = await api.put(`/vendor-locations/${first.id}`, { is_primary: true });
      expect(moved.body.is_primary).toBe(true);
      expect(await primaries(api, vendor.id)).toEqual([first.id]);
      expect(await primaries(api, other.id)).toEqual([theirs.id]);

      // Clearing it leaves the vendor without a primary site.
      await api.put(`/vendor-locations/${first.id}`, { is_primary: false });
      expect(await primaries(api, vendor.id)).toEqual([]);
    });

    it('moves updated_at of the site whose is_primary a new primary clears, so updated_since finds it', async () => {
      const api = restClient(stack, await createTenant(stack.orm));
      const vendor = await api.create('vendors', { vendor_name: 'Sync Supply' });
      const first = await api.create('vendor-locations', { vendor_id: vendor.id, name: 'First', is_primary: true });
      const since = new Date(Date.parse(first.updated_at) + 1).toISOString();
      const second = await api.create('vendor-locations', { vendor_id: vendor.id, name: 'Second', is_primary: true });
      const changed = await api.get(`/vendor-locations?updated_since=${encodeURIComponent(since)}`);
      expect(changed.body.data.map((l: { id: string }) => l.id)).toEqual([first.id, second.id]);
    });

    it('keeps one primary site when several are created as primary at the same moment', async () => {
      const api = restClient(stack, await createTenant(stack.orm));
      const counts: number[] = [];
      for (let round = 0; round < 8; round++) {
        const vendor = await api.create('vendors', { vendor_name: `Race Supply ${round}` });
        const created = await Promise.all(['A', 'B', 'C'].map((name) => api.post('/vendor-locations', { vendor_id: vendor.id, name, is_primary: true })));
        expect(created.map((r) => r.status)).toEqual([201, 201, 201]);
        counts.push((await primaries(api, vendor.id)).length);
      }
      expect(counts).toEqual(counts.map(() => 1));
    });

    it("refuses a vendor_id of another company's vendor (400)", async () => {
      const api = restClient(stack, await createTenant(stack.orm));
      const theirs = await restClient(stack, await createTenant(stack.orm)).create('vendors', { vendor_name: 'Theirs' });
      const response = await api.post('/vendor-locations', { vendor_id: theirs.id, name: 'Trespass' });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'vendor_id' } });
    });

    it.each([
      ['Illinois', 'IL'],
      ['ontario', 'ON'],
      ['qc', 'QC'],
    ])('stores state %s as %s', async (state, code) => {
      const api = restClient(stack, await createTenant(stack.orm));
      const vendor = await api.create('vendors', { vendor_name: 'State Supply' });
      const site = await api.create('vendor-locations', { vendor_id: vendor.id, name: 'Site', state });
      expect(site.state).toBe(code);
    });

    it('emits no events (the spec defines none for vendor locations)', async () => {
      const tenant = await createTenant(stack.orm);
      const api = restClient(stack, tenant);
      const vendor = await api.create('vendors', { vendor_name: 'Quiet Supply' });
      const before = (await outboxOf(stack, tenant.companyId)).length;
      const site = await api.create('vendor-locations', { vendor_id: vendor.id, name: 'Quiet Yard' });
      await api.put(`/vendor-locations/${site.id}`, { city: 'Peoria' });
      await api.delete(`/vendor-locations/${site.id}`);
      expect((await outboxOf(stack, tenant.companyId)).length).toBe(before);
    });
  });
});
