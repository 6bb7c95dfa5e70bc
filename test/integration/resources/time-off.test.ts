import { restClient, unique, unknownId } from '../../helpers/api-client';
import { seedEmployee } from '../../helpers/fixtures';
import { createTenant, startStack, type TestStack } from '../../helpers/stack';
import { crudSuite, type CrudFixture } from './crud-suite';

/** A different day for every record the suite makes: requests are identified by their dates. */
let days = 0;
const nextDay = () => new Date(Date.UTC(2030, 0, 1) + days++ * 3 * 86_400_000).toISOString().slice(0, 10);
const plusDays = (date: string, n: number) => new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

const timeOffFixture: CrudFixture = {
  collection: 'time-off',
  table: 'time_off',
  keyFields: ['start_date', 'end_date'],
  parents: async ({ stack, tenant }) => ({
    employee: await seedEmployee(stack, tenant, { name: 'Tess Time' }),
    other: await seedEmployee(stack, tenant, { name: 'Otto Other' }),
  }),
  body: (parents) => {
    const start = nextDay();
    return { employee_id: parents.employee, start_date: start, end_date: plusDays(start, 1), time_off_type: 'personal', status: 'pending', reason: 'Family event', notes: 'Back on Monday' };
  },
  listRecords: (p) => [
    { employee_id: p.employee, start_date: '2026-07-01', end_date: '2026-07-05' },
    { employee_id: p.employee, start_date: '2026-08-10', end_date: '2026-08-10', start_time: '09:00:00', end_time: '12:30:00', time_off_type: 'sick_leave', status: 'pending' },
    { employee_id: p.other, start_date: '2026-07-03', end_date: '2026-07-04', time_off_type: 'personal', status: 'denied' },
    { employee_id: p.other, start_date: '2026-09-01', end_date: '2026-09-02', time_off_type: 'unpaid' },
  ],
  filters: [
    { query: (p) => `employee_id=${p.employee}`, expect: [0, 1] },
    { query: () => 'status=pending', expect: [1] },
    { query: () => 'status=approved', expect: [0, 3] },
    { query: () => 'time_off_type=sick_leave', expect: [1] },
    // Requests overlapping the range.
    { query: () => 'date_from=2026-07-04&date_to=2026-07-10', expect: [0, 2] },
    { query: () => 'date_from=2026-08-01', expect: [1, 3] },
    { query: () => 'date_to=2026-07-02', expect: [0] },
    { query: (p) => `employee_id=${p.other}&date_from=2026-08-01`, expect: [3] },
  ],
  update: { patch: { status: 'approved', time_off_type: 'vacation', notes: 'Approved by the site lead' }, clear: 'reason' },
  textField: 'reason',
  invalid: [
    { what: 'no start_date', on: 'create', body: (p) => ({ employee_id: p.employee, end_date: '2031-01-01' }), field: 'start_date' },
    { what: 'an end_date before start_date', on: 'create', body: (p) => ({ employee_id: p.employee, start_date: '2031-02-02', end_date: '2031-02-01' }), field: 'end_date' },
    { what: 'an end_date before start_date', on: 'update', body: () => ({ end_date: '2000-01-01' }), field: 'end_date' },
    { what: 'a start_time without end_time', on: 'create', body: (p) => ({ employee_id: p.employee, start_date: '2031-03-01', end_date: '2031-03-01', start_time: '09:00:00' }), field: 'end_time' },
    { what: 'an end_time without start_time', on: 'update', body: () => ({ end_time: '17:00:00' }), field: 'start_time' },
    {
      what: 'an end_time before start_time on one day',
      on: 'create',
      body: (p) => ({ employee_id: p.employee, start_date: '2031-04-01', end_date: '2031-04-01', start_time: '13:00:00', end_time: '09:00:00' }),
      field: 'end_time',
    },
    { what: 'a time without seconds', on: 'update', body: () => ({ start_time: '09:00', end_time: '17:00:00' }), field: 'start_time' },
    { what: 'hour 24', on: 'update', body: () => ({ start_time: '08:00:00', end_time: '24:00:00' }), field: 'end_time' },
    { what: 'a status not in the list', on: 'update', body: () => ({ status: 'maybe' }), field: 'status' },
    { what: 'a time_off_type not in the list', on: 'update', body: () => ({ time_off_type: 'holiday' }), field: 'time_off_type' },
    { what: 'an employee of no company of yours', on: 'create', body: () => ({ employee_id: unknownId(), start_date: '2031-05-01', end_date: '2031-05-01' }), field: 'employee_id' },
    { what: 'another employee (it cannot change)', on: 'update', body: (p) => ({ employee_id: p.other }), field: 'employee_id' },
  ],
};

describe('REST /time-off', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ worker: false });
  });
  afterAll(() => stack.close());

  crudSuite(timeOffFixture, () => stack);

  describe('defaults and partial days (webhooks.md 2.7)', () => {
    it('defaults to an approved vacation of full days', async () => {
      const tenant = await createTenant(stack.orm);
      const api = restClient(stack, tenant);
      const request = await api.create('time-off', { employee_id: await seedEmployee(stack, tenant), start_date: '2026-12-24', end_date: '2026-12-31' });
      expect(request).toMatchObject({ time_off_type: 'vacation', status: 'approved', start_time: null, end_time: null, reason: null, notes: null });
    });

    it('takes a partial day over several days, and turns it back into full days with both times null', async () => {
      const tenant = await createTenant(stack.orm);
      const api = restClient(stack, tenant);
      const request = await api.create('time-off', {
        employee_id: await seedEmployee(stack, tenant),
        start_date: '2026-05-04',
        end_date: '2026-05-05',
        start_time: '13:00:00',
        end_time: '10:00:00',
      });
      expect(request).toMatchObject({ start_time: '13:00:00', end_time: '10:00:00' });
      expect((await api.put(`/time-off/${request.id}`, { start_time: null, end_time: null })).body).toMatchObject({ start_time: null, end_time: null });
    });

    it('lets two employees be off on the same dates', async () => {
      const tenant = await createTenant(stack.orm);
      const api = restClient(stack, tenant);
      for (const name of ['One', 'Two']) {
        const response = await api.post('/time-off', { employee_id: await seedEmployee(stack, tenant, { name }), start_date: '2026-06-01', end_date: '2026-06-02', reason: unique() });
        expect(response.status).toBe(201);
      }
    });
  });
});
