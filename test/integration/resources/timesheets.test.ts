import { type RestClient, restClient, unique, unknownId } from '../../helpers/api-client';
import { outboxOf, seedEmployee, seedProject } from '../../helpers/fixtures';
import { createTenant, startStack, type Tenant, type TestStack } from '../../helpers/stack';
import { crudSuite, type CrudFixture, type Parents } from './crud-suite';

/** A different day for every timesheet the suite makes: an employee has one per day. */
let days = 0;
const nextDay = () => new Date(Date.UTC(2030, 0, 1) + days++ * 86_400_000).toISOString().slice(0, 10);

/** An employee, a second one and a work order (by number) of a new company. */
async function timesheetParents(stack: TestStack, tenant: Tenant, api: RestClient): Promise<Parents> {
  const projectId = await seedProject(stack, tenant);
  const workOrder = await api.create('work-orders', { title: 'Level 3 drywall', project_id: projectId });
  return {
    employee: await seedEmployee(stack, tenant, { name: 'Tim Sheet' }),
    other: await seedEmployee(stack, tenant, { name: 'Otto Other' }),
    workOrder: workOrder.work_order_number,
    workOrderId: workOrder.id,
  };
}

const timesheetsFixture: CrudFixture = {
  collection: 'timesheets',
  table: 'timesheets',
  keyFields: ['timesheet_date'],
  keyUpdatable: false,
  parents: ({ stack, tenant, api }) => timesheetParents(stack, tenant, api),
  body: (parents) => ({ employee_id: parents.employee, timesheet_date: nextDay(), total_hours: 8, notes: 'Level 3 framing' }),
  listRecords: (p) => [
    { employee_id: p.employee, timesheet_date: '2026-03-02', entries: [{ entry_date: '2026-03-02', hours: 8, work_type_code: 'REG', work_order_number: p.workOrder }] },
    { employee_id: p.employee, timesheet_date: '2026-03-03', status: 'submitted' },
    { employee_id: p.other, timesheet_date: '2026-03-03', status: 'locked', total_hours: 7.5 },
    { employee_id: p.other, timesheet_date: '2026-03-10' },
  ],
  filters: [
    { query: (p) => `employee_id=${p.employee}`, expect: [0, 1] },
    { query: () => 'status=submitted', expect: [1] },
    { query: () => 'status=draft', expect: [0, 3] },
    { query: () => 'date_from=2026-03-03', expect: [1, 2, 3] },
    { query: () => 'date_to=2026-03-03', expect: [0, 1, 2] },
    { query: () => 'date_from=2026-03-03&date_to=2026-03-09', expect: [1, 2] },
    { query: (p) => `employee_id=${p.other}&status=locked`, expect: [2] },
  ],
  update: { patch: { total_hours: 9.5, notes: 'Overtime approved' }, clear: 'notes' },
  textField: 'notes',
  textMaxLength: 10_000,
  invalid: [
    { what: 'no timesheet_date', on: 'create', body: (p) => ({ employee_id: p.employee }), field: 'timesheet_date' },
    { what: 'an employee of no company of yours', on: 'create', body: () => ({ employee_id: unknownId(), timesheet_date: '2031-01-01' }), field: 'employee_id' },
    { what: 'a status not in the list', on: 'create', body: (p) => ({ employee_id: p.employee, timesheet_date: '2031-01-02', status: 'approved' }), field: 'status' },
    { what: 'a status (lifecycle actions change it)', on: 'update', body: () => ({ status: 'submitted' }), field: 'status' },
    { what: 'another employee (it cannot change)', on: 'update', body: (p) => ({ employee_id: p.other }), field: 'employee_id' },
    { what: 'total_hours below 0', on: 'update', body: () => ({ total_hours: -1 }), field: 'total_hours' },
    { what: 'total_hours over 24', on: 'update', body: () => ({ total_hours: 24.5 }), field: 'total_hours' },
    {
      what: 'an entry_date other than timesheet_date',
      on: 'create',
      body: (p) => ({ employee_id: p.employee, timesheet_date: '2031-01-03', entries: [{ entry_date: '2031-01-04', hours: 8, work_type_code: 'VAC' }] }),
      field: 'entries[0].entry_date',
    },
    { what: 'an entry of 24.5 hours', on: 'update', body: () => ({ entries: [{ entry_date: '2031-01-01', hours: 24.5, work_type_code: 'VAC' }] }), field: 'entries[0].hours' },
    { what: 'an entry of negative hours', on: 'update', body: () => ({ entries: [{ entry_date: '2031-01-01', hours: -0.5, work_type_code: 'VAC' }] }), field: 'entries[0].hours' },
    { what: 'a new entry without hours', on: 'update', body: () => ({ entries: [{ entry_date: '2031-01-01', work_type_code: 'VAC' }] }), field: 'entries[0].hours' },
    {
      what: 'a billable entry (REG) without a work order',
      on: 'create',
      body: (p) => ({ employee_id: p.employee, timesheet_date: '2031-01-05', entries: [{ entry_date: '2031-01-05', hours: 8, work_type_code: 'REG' }] }),
      field: 'entries[0].work_order_number',
    },
    {
      what: 'a work type code no type has',
      on: 'create',
      body: (p) => ({ employee_id: p.employee, timesheet_date: '2031-01-06', entries: [{ entry_date: '2031-01-06', hours: 8, work_type_code: 'NOPE' }] }),
      field: 'entries[0].work_type_code',
    },
    {
      what: 'a work order number no work order has',
      on: 'create',
      body: (p) => ({ employee_id: p.employee, timesheet_date: '2031-01-07', entries: [{ entry_date: '2031-01-07', hours: 8, work_order_number: 'WO-999999' }] }),
      field: 'entries[0].work_order_number',
    },
    { what: 'an entry_id of no entry of the timesheet', on: 'update', body: () => ({ entries: [{ entry_id: unknownId(), hours: 4 }] }), field: 'entries[0].entry_id' },
    { what: 'a start_time that is not HH:MM', on: 'update', body: () => ({ entries: [{ entry_date: '2031-01-01', hours: 1, work_type_code: 'VAC', start_time: '7:00' }] }), field: 'entries[0].start_time' },
    { what: 'a work_type_code of 21 characters', on: 'update', body: () => ({ entries: [{ entry_date: '2031-01-01', hours: 1, work_type_code: 'C'.repeat(21) }] }), field: 'entries[0].work_type_code' },
    { what: 'a work_type_name of 101 characters', on: 'update', body: () => ({ entries: [{ entry_date: '2031-01-01', hours: 1, work_type_name: 'N'.repeat(101) }] }), field: 'entries[0].work_type_name' },
  ],
};

describe('REST /timesheets', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ worker: false });
  });
  afterAll(() => stack.close());

  crudSuite(timesheetsFixture, () => stack);

  /** A new company with its parents, and a draft timesheet of `day` with `entries`. */
  async function company() {
    const tenant = await createTenant(stack.orm);
    const api = restClient(stack, tenant);
    const parents = await timesheetParents(stack, tenant, api);
    const sheet = async (entries: Record<string, unknown>[] = [], extra: Record<string, unknown> = {}) => {
      const day = nextDay();
      return api.post('/timesheets', { employee_id: parents.employee, timesheet_date: day, entries: entries.map((e) => ({ entry_date: day, hours: 4, ...e })), ...extra });
    };
    return { tenant, api, parents, sheet };
  }

  describe('entries (webhooks.md 2.8)', () => {
    it('resolves the work type by code, by name (ignoring case) and by default, and takes several entries a day', async () => {
      const { api, parents, sheet } = await company();
      const response = await sheet([
        { work_type_code: 'ot', work_order_number: parents.workOrder, start_time: '15:30', end_time: '17:00' },
        { work_type_name: 'sick LEAVE' },
        { work_order_number: parents.workOrder.toLowerCase(), notes: 'Taping' },
      ]);
      expect(response.status).toBe(201);
      expect(response.body.entries.map((e: any) => [e.work_type_code, e.work_type_name, e.work_order_number, e.work_order_id])).toEqual([
        ['OT', 'Overtime', parents.workOrder, parents.workOrderId],
        ['SICK', 'Sick leave', null, null],
        ['REG', 'Regular', parents.workOrder, parents.workOrderId],
      ]);
      expect(response.body.entries[0]).toMatchObject({ start_time: '15:30', end_time: '17:00', work_order_title: 'Level 3 drywall' });
      // A new default is used from then on.
      const vacation = (await api.get('/work-types?code=VAC')).body.data[0];
      await api.put(`/work-types/${vacation.id}`, { is_default: true });
      expect((await sheet([{}])).body.entries[0].work_type_code).toBe('VAC');
    });

    it('prefers work_type_code to work_type_name', async () => {
      const { sheet } = await company();
      const response = await sheet([{ work_type_code: 'HOL', work_type_name: 'Vacation' }]);
      expect(response.body.entries[0].work_type_code).toBe('HOL');
    });

    it('refuses an inactive work type by code and by name, 400 naming the field', async () => {
      const { api, sheet } = await company();
      const training = await api.create('work-types', { code: 'TRN', name: 'Training', is_active: false });
      for (const [entry, field] of [
        [{ work_type_code: 'trn' }, 'entries[0].work_type_code'],
        [{ work_type_name: 'Training' }, 'entries[0].work_type_name'],
      ] as const) {
        const response = await sheet([entry]);
        expect({ status: response.status, code: response.body.error.code, field: response.body.error.details.field }).toEqual({ status: 400, code: 'INVALID_REQUEST', field });
      }
      await api.put(`/work-types/${training.id}`, { is_active: true });
      expect((await sheet([{ work_type_name: 'Training' }])).status).toBe(201);
    });

    it('needs a work order for billable types unless requires_work_order is false, and for any type where it is true', async () => {
      const { api, parents, sheet } = await company();
      await api.create('work-types', { code: 'TM', name: 'Time and materials', billable: true, requires_work_order: false });
      await api.create('work-types', { code: 'SAFE', name: 'Safety walk', billable: false, requires_work_order: true });
      expect((await sheet([{ work_type_code: 'TM' }])).status).toBe(201);
      expect((await sheet([{ work_type_code: 'VAC', work_order_number: null }])).status).toBe(201);
      const safety = await sheet([{ work_type_code: 'SAFE' }]);
      expect(safety.status).toBe(400);
      expect(safety.body.error.details).toEqual({ field: 'entries[0].work_order_number', reason: expect.stringContaining('SAFE') });
      expect((await sheet([{ work_type_code: 'SAFE', work_order_number: parents.workOrder }])).status).toBe(201);
    });

    it('adds entries, changes the one entry_id names, and deletes one; each change is a timesheet.updated with its entry', async () => {
      const { tenant, api, parents, sheet } = await company();
      const created = (await sheet([{ work_type_code: 'VAC' }])).body;
      const [first] = created.entries;
      const day = created.timesheet_date;
      const updated = await api.put(`/timesheets/${created.id}`, {
        entries: [{ entry_id: first.id, hours: 6, notes: 'Left early' }, { entry_date: day, hours: 2, work_type_code: 'REG', work_order_number: parents.workOrder }],
      });
      expect(updated.status).toBe(200);
      expect(updated.body.entries.map((e: any) => [e.id === first.id, e.hours, e.work_type_code, e.notes])).toEqual([
        [true, 6, 'VAC', 'Left early'],
        [false, 2, 'REG', null],
      ]);
      const second = updated.body.entries[1];
      expect((await api.put(`/timesheets/${created.id}`, { entries: [{ entry_id: first.id, entry_date: '2031-12-31' }] })).body.error.details.field).toBe('entries[0].entry_date');
      const deleted = await api.delete(`/timesheets/${created.id}/entries/${first.id}`);
      expect(deleted.status).toBe(204);
      expect((await api.get(`/timesheets/${created.id}`)).body.entries.map((e: any) => e.id)).toEqual([second.id]);
      expect((await api.delete(`/timesheets/${created.id}/entries/${first.id}`)).body.error).toMatchObject({ code: 'NOT_FOUND', details: { field: 'entry_id' } });
      expect((await api.delete(`/timesheets/${created.id}/entries/not-an-id`)).status).toBe(404);

      const updates = (await outboxOf(stack, tenant.companyId)).filter((e) => e.event_type === 'timesheet.updated');
      expect(updates.map((e) => [e.data.update_type, e.data.entry.entry_id, e.data.entry.hours])).toEqual([
        ['entry_updated', first.id, 6],
        ['entry_added', second.id, 2],
        ['entry_deleted', first.id, 6],
      ]);
    });

    it('records notes_updated for notes and total_hours, and nothing for an update that changes nothing', async () => {
      const { tenant, api, sheet } = await company();
      const created = (await sheet([], { notes: 'Start' })).body;
      await api.put(`/timesheets/${created.id}`, { notes: 'Rain delay', total_hours: 6 });
      await api.put(`/timesheets/${created.id}`, { notes: 'Rain delay', total_hours: 6 });
      const updates = (await outboxOf(stack, tenant.companyId)).filter((e) => e.event_type === 'timesheet.updated');
      expect(updates.map((e) => [e.data.update_type, e.data.entry, e.catalog_data!.changes])).toEqual([
        ['notes_updated', null, { notes: { from: 'Start', to: 'Rain delay' }, total_hours: { from: null, to: 6 } }],
      ]);
    });
  });

  describe('the lifecycle over REST (webhooks.md 3)', () => {
    const STATUSES = ['draft', 'submitted', 'locked', 'processed'] as const;
    const ACTIONS = { submit: ['draft', 'submitted'], lock: ['submitted', 'locked'], unlock: ['locked', 'draft'], process: ['locked', 'processed'] } as const;
    const EVENTS = { submit: 'timesheet.submitted', lock: 'timesheet.locked', unlock: 'timesheet.unlocked', process: 'timesheet.processed' };
    const cases = STATUSES.flatMap((status) => (Object.keys(ACTIONS) as (keyof typeof ACTIONS)[]).map((action) => [action, status] as const));

    it.each(cases)('%s of a %s timesheet', async (action, status) => {
      const { tenant, api, sheet } = await company();
      const created = (await sheet([{ work_type_code: 'VAC' }], { status })).body;
      const before = (await outboxOf(stack, tenant.companyId)).length;
      const response = await api.post(`/timesheets/${created.id}/${action}`, undefined);
      const [from, to] = ACTIONS[action];
      const events = (await outboxOf(stack, tenant.companyId)).slice(before);
      if (status === from) {
        expect(response.status).toBe(200);
        expect(response.body).toMatchObject({ id: created.id, status: to });
        expect(events.map((e) => [e.event_type, e.data.timesheet_id])).toEqual([[EVENTS[action], created.id]]);
      } else {
        expect(response.status).toBe(409);
        expect(response.body.error).toEqual({ code: 'CONFLICT', message: expect.stringContaining(status), details: { field: 'status', reason: `is ${status}` } });
        expect(events).toEqual([]);
        expect((await api.get(`/timesheets/${created.id}`)).body).toEqual(created);
      }
    });

    it('goes draft → submitted → locked → unlocked to draft, editable again → submitted → locked → processed, with its timestamps', async () => {
      const { api, sheet } = await company();
      const { id } = (await sheet([{ work_type_code: 'VAC' }])).body;
      const step = async (action: string) => (await api.post(`/timesheets/${id}/${action}`, undefined)).body;
      const submitted = await step('submit');
      expect(submitted.submitted_at).toEqual(expect.any(String));
      const locked = await step('lock');
      expect(locked).toMatchObject({ status: 'locked', locked_at: expect.any(String) });
      const unlocked = await step('unlock');
      expect(unlocked).toMatchObject({ status: 'draft', submitted_at: null, locked_at: null });
      expect((await api.put(`/timesheets/${id}`, { notes: 'Corrected' })).status).toBe(200);
      await step('submit');
      await step('lock');
      const processed = await step('process');
      expect(processed).toMatchObject({ status: 'processed', notes: 'Corrected', processed_at: expect.any(String), payroll_run_id: null });
    });

    it.each(['locked', 'processed'])('refuses every edit of a %s timesheet with 409 naming its status, and changes nothing', async (status) => {
      const { api, sheet } = await company();
      const created = (await sheet([{ work_type_code: 'VAC' }], { status })).body;
      const attempts = [
        await api.put(`/timesheets/${created.id}`, { notes: 'Sneaky' }),
        await api.put(`/timesheets/${created.id}`, { entries: [{ entry_id: created.entries[0].id, hours: 12 }] }),
        await api.put(`/timesheets/${created.id}`, { entries: [{ entry_date: created.timesheet_date, hours: 1, work_type_code: 'VAC' }] }),
        await api.delete(`/timesheets/${created.id}/entries/${created.entries[0].id}`),
        await api.delete(`/timesheets/${created.id}`),
      ];
      for (const response of attempts) {
        expect({ status: response.status, error: response.body.error }).toEqual({
          status: 409,
          error: { code: 'CONFLICT', message: expect.stringContaining(`is ${status}`), details: { field: 'status', reason: `is ${status}` } },
        });
      }
      expect((await api.get(`/timesheets/${created.id}`)).body).toEqual(created);
    });

    it('lets timesheets:write submit, timesheets:approve lock and unlock, timesheets:process process, and no other', async () => {
      const { tenant, sheet } = await company();
      const as = (scopes: string[]) => restClient(stack, tenant, { scopes: ['timesheets:read', ...scopes] });
      const { id } = (await sheet([{ work_type_code: 'VAC' }])).body;
      const steps: [string, string, string][] = [
        ['submit', 'timesheets:write', 'timesheets:approve'],
        ['lock', 'timesheets:approve', 'timesheets:write'],
        ['unlock', 'timesheets:approve', 'timesheets:process'],
        ['submit', 'timesheets:write', 'timesheets:process'],
        ['lock', 'timesheets:approve', 'timesheets:process'],
        ['process', 'timesheets:process', 'timesheets:approve'],
      ];
      for (const [action, allowed, other] of steps) {
        const refused = await as([other]).post(`/timesheets/${id}/${action}`, undefined);
        expect({ action, status: refused.status, reason: refused.body.error.details.reason }).toEqual({ action, status: 403, reason: `missing scope ${allowed}` });
        expect({ action, status: (await as([allowed]).post(`/timesheets/${id}/${action}`, undefined)).status }).toEqual({ action, status: 200 });
      }
    });
  });

  it('keeps an employee with timesheets (409): payroll history stays whole', async () => {
    const { api, parents, sheet } = await company();
    await sheet();
    const response = await api.delete(`/employees/${parents.employee}`);
    expect(response.status).toBe(409);
    expect(response.body.error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('timesheet') });
    expect((await api.get(`/employees/${parents.employee}`)).status).toBe(200);
  });

  it('keeps a work type that entries use (409), and lets it be deactivated instead', async () => {
    const { api, sheet } = await company();
    const type = await api.create('work-types', { code: `U${unique().slice(0, 4)}`, name: 'Used type' });
    await sheet([{ work_type_code: type.code }]);
    const response = await api.delete(`/work-types/${type.id}`);
    expect(response.status).toBe(409);
    expect(response.body.error.details.reason).toBe('in use');
    expect((await api.put(`/work-types/${type.id}`, { is_active: false })).status).toBe(200);
  });
});
