import { restClient, unique } from '../../helpers/api-client';
import { createTenant, startStack, type TestStack } from '../../helpers/stack';
import { crudSuite, type CrudFixture } from './crud-suite';

const BUILT_INS = ['REG', 'OT', 'VAC', 'SICK', 'HOL'];

const workTypesFixture: CrudFixture = {
  collection: 'work-types',
  table: 'work_types',
  keyFields: ['name'],
  parents: async () => ({}),
  body: (_, tag) => ({ code: `X-${tag}`, name: `Type ${tag}`, billable: true, requires_work_order: false, pay_multiplier: 1.25, is_active: true }),
  // Every company starts with the built-ins: indexes 0 to 4 (REG, OT, VAC, SICK, HOL).
  listRecords: () => [
    { code: 'PW', name: 'Prevailing wage', billable: true, pay_multiplier: 1.2 },
    { code: 'TRN', name: 'Training', billable: false, is_active: false },
    { name: 'Shop time', billable: false },
  ],
  filters: [
    { query: () => 'code=reg', expect: [0] },
    { query: () => 'code=TRN', expect: [6] },
    { query: () => 'is_active=false', expect: [6] },
    { query: () => 'is_active=true', expect: [0, 1, 2, 3, 4, 5, 7] },
    { query: () => 'billable=true', expect: [0, 1, 5] },
    { query: () => 'billable=false&is_active=true', expect: [2, 3, 4, 7] },
  ],
  update: { patch: { name: 'Renamed type', pay_multiplier: 2, billable: false, requires_work_order: true }, clear: 'code' },
  textField: 'name',
  textMaxLength: 100,
  invalid: [
    { what: 'no name', on: 'create', body: () => ({ code: 'NN' }), field: 'name' },
    { what: 'a code of 21 characters', on: 'create', body: () => ({ name: `T ${unique()}`, code: 'C'.repeat(21) }), field: 'code' },
    { what: 'a blank code', on: 'update', body: () => ({ code: '  ' }), field: 'code' },
    { what: 'a pay_multiplier over 10', on: 'create', body: () => ({ name: `T ${unique()}`, pay_multiplier: 10.5 }), field: 'pay_multiplier' },
    { what: 'a negative pay_multiplier', on: 'update', body: () => ({ pay_multiplier: -1 }), field: 'pay_multiplier' },
    { what: 'billable as text', on: 'update', body: () => ({ billable: 'yes' }), field: 'billable' },
    { what: 'requires_work_order as text', on: 'update', body: () => ({ requires_work_order: 'no' }), field: 'requires_work_order' },
    { what: 'is_built_in (read-only)', on: 'update', body: () => ({ is_built_in: true }), field: 'is_built_in' },
  ],
};

describe('REST /work-types', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ worker: false });
  });
  afterAll(() => stack.close());

  crudSuite(workTypesFixture, () => stack);

  describe('built-ins and the default', () => {
    async function company() {
      const api = restClient(stack, await createTenant(stack.orm));
      const types = (await api.get('/work-types')).body.data as any[];
      const byCode = (code: string) => types.find((t) => t.code === code);
      return { api, byCode };
    }

    it('gives every company REG, OT, VAC, SICK and HOL, REG the default, REG and OT billable', async () => {
      const { api } = await company();
      const types = (await api.get('/work-types')).body.data;
      expect(types.map((t: any) => [t.code, t.name, t.billable, t.requires_work_order, t.pay_multiplier, t.is_default, t.is_built_in, t.is_active])).toEqual([
        ['REG', 'Regular', true, null, 1, true, true, true],
        ['OT', 'Overtime', true, null, 1.5, false, true, true],
        ['VAC', 'Vacation', false, null, 1, false, true, true],
        ['SICK', 'Sick leave', false, null, 1, false, true, true],
        ['HOL', 'Holiday', false, null, 1, false, true, true],
      ]);
    });

    it.each(BUILT_INS)('keeps the code of %s and refuses to delete it, but renames and deactivates it', async (code) => {
      const { api, byCode } = await company();
      const type = byCode(code);
      const recode = await api.put(`/work-types/${type.id}`, { code: 'NEW' });
      expect(recode.status).toBe(400);
      expect(recode.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'code' } });
      const deleted = await api.delete(`/work-types/${type.id}`);
      expect(deleted.status).toBe(409);
      expect(deleted.body.error.code).toBe('CONFLICT');
      expect((await api.put(`/work-types/${type.id}`, { name: `${type.name} time` })).body.name).toBe(`${type.name} time`);
      if (code !== 'REG') expect((await api.put(`/work-types/${type.id}`, { is_active: false })).body.is_active).toBe(false);
    });

    it('makes another type the default, clearing the old default, which then can be deactivated', async () => {
      const { api, byCode } = await company();
      const made = await api.post('/work-types', { code: 'FLD', name: 'Field work', billable: true, is_default: true });
      expect(made.status).toBe(201);
      expect(made.body.is_default).toBe(true);
      const reg = (await api.get(`/work-types/${byCode('REG').id}`)).body;
      expect(reg.is_default).toBe(false);
      expect(Date.parse(reg.updated_at)).toBeGreaterThan(Date.parse(byCode('REG').updated_at));
      expect((await api.get('/work-types?limit=100')).body.data.filter((t: any) => t.is_default).map((t: any) => t.code)).toEqual(['FLD']);
      expect((await api.put(`/work-types/${reg.id}`, { is_active: false })).status).toBe(200);
    });

    it('refuses to leave the company without a default: the default cannot be unset, deactivated or deleted (409)', async () => {
      const { api } = await company();
      const custom = await api.create('work-types', { name: 'Default to be', is_default: true });
      for (const [response, field] of [
        [await api.put(`/work-types/${custom.id}`, { is_default: false }), 'is_default'],
        [await api.put(`/work-types/${custom.id}`, { is_active: false }), 'is_active'],
        [await api.delete(`/work-types/${custom.id}`), 'id'],
      ] as const) {
        expect({ status: response.status, code: response.body.error.code, field: response.body.error.details.field }).toEqual({ status: 409, code: 'CONFLICT', field });
      }
      expect((await api.get(`/work-types/${custom.id}`)).body).toEqual(custom);
    });

    it('refuses a default that is inactive from the start', async () => {
      const { api } = await company();
      const response = await api.post('/work-types', { name: 'Inactive default', is_default: true, is_active: false });
      expect(response.status).toBe(409);
      expect(response.body.error.details.field).toBe('is_active');
      expect((await api.get('/work-types?limit=100')).body.data.filter((t: any) => t.is_default).map((t: any) => t.code)).toEqual(['REG']);
    });

    it('keeps codes unique ignoring case, the built-ins included (409 naming code)', async () => {
      const { api } = await company();
      await api.create('work-types', { name: 'Prevailing wage', code: 'PW' });
      for (const body of [{ name: 'Regular again', code: 'reg' }, { name: 'Other', code: 'pw' }]) {
        const response = await api.post('/work-types', body);
        expect(response.status).toBe(409);
        expect(response.body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'code' } });
      }
      const several = await Promise.all([1, 2].map((n) => api.post('/work-types', { name: `Racer ${n}`, code: 'RACE' })));
      expect(several.map((r) => r.status).sort()).toEqual([201, 409]);
    });

    it('lets several types have no code', async () => {
      const { api } = await company();
      for (const name of ['No code one', 'No code two']) expect((await api.post('/work-types', { name })).body.code).toBeNull();
    });
  });
});
