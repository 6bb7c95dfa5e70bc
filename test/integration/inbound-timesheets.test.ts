import { type InboundSender, inboundSender, type RestClient, restClient } from '../helpers/api-client';
import { countRows, outboxOf, seedProject } from '../helpers/fixtures';
import { expectError, expectRecorded } from '../helpers/inbound-assertions';
import { createTenant, startStack, type Tenant, type TestStack } from '../helpers/stack';

/**
 * The inbound timesheet operations (webhooks.md 2.8, 3, 4): timesheets identified by employee and day, their
 * entries under the rules of 2.8, their status through the lifecycle, through the same services as REST.
 */
describe('inbound timesheet operations', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack({ worker: false });
  });
  afterAll(() => stack.close());

  /** A new company with an employee E-1 and a work order: an inbound sender and a REST client. */
  async function company(): Promise<{ tenant: Tenant; inbound: InboundSender; api: RestClient; workOrder: string }> {
    const tenant = await createTenant(stack.orm, ['admin']);
    const api = restClient(stack, tenant);
    const inbound = inboundSender(stack, tenant);
    await api.create('employees', { emp_number: 'E-1', name: 'Dana Builder', email: 'dana@example.com', employee_type: 'site_worker', department_name: 'Field' });
    const workOrder = await api.create('work-orders', { title: 'Level 3 drywall', project_id: await seedProject(stack, tenant) });
    return { tenant, inbound, api, workOrder: workOrder.work_order_number };
  }

  describe('timesheet.*', () => {
    const entry = (fields: Record<string, unknown>) => ({ entry_date: '2026-03-02', hours: 4, ...fields });

    it('timesheet.created takes several entries a day, the work type by code, name or default, and starts as a draft', async () => {
      const { inbound, api, workOrder } = await company();
      const response = await inbound.send('timesheet.created', {
        emp_number: 'E-1',
        timesheet_date: '2026-03-02',
        total_hours: 9.5,
        notes: 'Level 3',
        entries: [entry({ work_type_code: 'REG', work_order_number: workOrder }), entry({ work_type_name: 'overtime', work_order_number: workOrder, hours: 1.5 }), entry({ work_order_number: workOrder })],
      });
      const event = await expectRecorded(stack, response, 'timesheet.created');
      expect(event.data).toMatchObject({ emp_number: 'E-1', employee_name: 'Dana Builder', status: 'draft', entry_count: 3 });
      const record = (await api.get(`/timesheets/${response.body.record_id}`)).body;
      expect(record.entries.map((e: any) => [e.work_type_code, e.hours])).toEqual([
        ['REG', 4],
        ['OT', 1.5],
        ['REG', 4],
      ]);
      expectError(await inbound.send('timesheet.created', { emp_number: 'E-1', timesheet_date: '2026-03-02' }), 409, 'CONFLICT', 'data.timesheet_date');
    });

    it.each([
      ['an entry_date other than timesheet_date', entry({ entry_date: '2026-03-03', work_type_code: 'VAC' }), 'data.entries[0].entry_date'],
      ['an entry of 24.5 hours', entry({ hours: 24.5, work_type_code: 'VAC' }), 'data.entries[0].hours'],
      ['a billable entry without a work order', entry({ work_type_code: 'OT' }), 'data.entries[0].work_order_number'],
      ['a billable entry by default (REG) without a work order', entry({}), 'data.entries[0].work_order_number'],
      ['an inactive work type by code', entry({ work_type_code: 'HOL' }), 'data.entries[0].work_type_code'],
      ['an inactive work type by name', entry({ work_type_name: 'Holiday' }), 'data.entries[0].work_type_name'],
      ['a work order number no work order has', entry({ work_type_code: 'REG', work_order_number: 'WO-999999' }), 'data.entries[0].work_order_number'],
    ])('refuses %s with 400 naming the field, and writes nothing', async (_what, bad, field) => {
      const { tenant, inbound, api } = await company();
      const holiday = (await api.get('/work-types?code=HOL')).body.data[0];
      await api.put(`/work-types/${holiday.id}`, { is_active: false });
      const response = await inbound.send('timesheet.created', { emp_number: 'E-1', timesheet_date: '2026-03-02', entries: [entry({ work_type_code: 'VAC' }), bad].reverse() });
      expectError(response, 400, 'INVALID_REQUEST', field);
      expect(await countRows(stack, 'timesheets', tenant.companyId)).toBe(0);
      expect(await countRows(stack, 'timesheet_entries', tenant.companyId)).toBe(0);
    });

    it('timesheet.updated changes notes and total_hours, adds entries and changes the one entry_id names', async () => {
      const { tenant, inbound, api } = await company();
      const created = await inbound.send('timesheet.created', { emp_number: 'E-1', timesheet_date: '2026-03-02', entries: [entry({ work_type_code: 'VAC' })] });
      const [first] = (await api.get(`/timesheets/${created.body.record_id}`)).body.entries;
      const before = (await outboxOf(stack, tenant.companyId)).length;
      const response = await inbound.send('timesheet.updated', {
        emp_number: 'E-1',
        timesheet_date: '2026-03-02',
        notes: 'Rained off at noon',
        total_hours: 6,
        entries: [{ entry_id: first.id, hours: 3 }, entry({ work_type_code: 'SICK', hours: 3 })],
      });
      await expectRecorded(stack, response, 'timesheet.updated');
      const events = (await outboxOf(stack, tenant.companyId)).slice(before);
      expect(events.map((e) => [e.event_type, e.data.update_type])).toEqual([
        ['timesheet.updated', 'entry_updated'],
        ['timesheet.updated', 'entry_added'],
        ['timesheet.updated', 'notes_updated'],
      ]);
      expect(events[0]!.id).toBe(response.body.event_id);
      const record = (await api.get(`/timesheets/${created.body.record_id}`)).body;
      expect(record).toMatchObject({ notes: 'Rained off at noon', total_hours: 6 });
      expect(record.entries.map((e: any) => [e.work_type_code, e.hours])).toEqual([
        ['VAC', 3],
        ['SICK', 3],
      ]);
    });

    describe('status through the lifecycle', () => {
      const STATUSES = ['draft', 'submitted', 'locked', 'processed'] as const;
      /** The steps of webhooks.md 3; draft on a locked timesheet unlocks it. */
      const LEGAL: Record<string, string> = { 'draft>submitted': 'timesheet.submitted', 'submitted>locked': 'timesheet.locked', 'locked>draft': 'timesheet.unlocked', 'locked>processed': 'timesheet.processed' };
      const cases = STATUSES.flatMap((from) => STATUSES.filter((to) => to !== from).map((to) => [from, to] as const));

      it.each(cases)('timesheet.updated from %s to %s', async (from, to) => {
        const { tenant, inbound, api } = await company();
        const created = await inbound.send('timesheet.created', { emp_number: 'E-1', timesheet_date: '2026-03-02', status: from, entries: [entry({ work_type_code: 'VAC' })] });
        const record = (await api.get(`/timesheets/${created.body.record_id}`)).body;
        const before = (await outboxOf(stack, tenant.companyId)).length;
        const response = await inbound.send('timesheet.updated', { emp_number: 'E-1', timesheet_date: '2026-03-02', status: to });
        const events = (await outboxOf(stack, tenant.companyId)).slice(before);
        const event = LEGAL[`${from}>${to}`];
        if (event) {
          await expectRecorded(stack, response, event);
          expect(events.map((e) => e.event_type)).toEqual([event]);
          expect((await api.get(`/timesheets/${record.id}`)).body.status).toBe(to);
        } else {
          expect({ status: response.status, error: response.body.error }).toEqual({
            status: 409,
            error: { code: 'CONFLICT', message: expect.stringContaining(from), details: { field: 'data.status', reason: `is ${from}` } },
          });
          expect(events).toEqual([]);
          expect((await api.get(`/timesheets/${record.id}`)).body).toEqual(record);
        }
      });

      it('treats the status a timesheet already has as no step', async () => {
        const { inbound } = await company();
        await inbound.send('timesheet.created', { emp_number: 'E-1', timesheet_date: '2026-03-02', status: 'submitted' });
        const response = await inbound.send('timesheet.updated', { emp_number: 'E-1', timesheet_date: '2026-03-02', status: 'submitted' });
        expect(response.status).toBe(200);
        expect(response.body.message).toContain('unchanged');
      });

      it('applies edits before submitting, so timesheet.submitted carries the new entries', async () => {
        const { tenant, inbound, workOrder } = await company();
        await inbound.send('timesheet.created', { emp_number: 'E-1', timesheet_date: '2026-03-02' });
        const response = await inbound.send('timesheet.updated', { emp_number: 'E-1', timesheet_date: '2026-03-02', status: 'submitted', entries: [entry({ work_order_number: workOrder, hours: 8 })] });
        const events = await outboxOf(stack, tenant.companyId);
        const submitted = events.find((e) => e.event_type === 'timesheet.submitted')!;
        expect(submitted.data.entries).toEqual([{ entry_date: '2026-03-02', work_order_id: expect.any(String), work_order_name: `${workOrder} Level 3 drywall`, hours: 8, notes: null }]);
        // The edits come first, and the response names the first event.
        expect(events.map((e) => e.event_type).slice(-2)).toEqual(['timesheet.updated', 'timesheet.submitted']);
        expect(response.body.event_id).toBe(events.at(-2)!.id);
      });

      it.each(['locked', 'processed'])('refuses edits of a %s timesheet with 409, and changes nothing', async (status) => {
        const { inbound, api } = await company();
        const created = await inbound.send('timesheet.created', { emp_number: 'E-1', timesheet_date: '2026-03-02', status, entries: [entry({ work_type_code: 'VAC' })] });
        const record = (await api.get(`/timesheets/${created.body.record_id}`)).body;
        for (const data of [{ notes: 'Sneaky' }, { total_hours: 1 }, { entries: [entry({ work_type_code: 'VAC' })] }, { entries: [{ entry_id: record.entries[0].id, hours: 1 }] }]) {
          expectError(await inbound.send('timesheet.updated', { emp_number: 'E-1', timesheet_date: '2026-03-02', ...data }), 409, 'CONFLICT', 'data.status');
        }
        expectError(await inbound.send('timesheet.deleted', { emp_number: 'E-1', timesheet_date: '2026-03-02' }), 409, 'CONFLICT', 'data.status');
        expect((await api.get(`/timesheets/${record.id}`)).body).toEqual(record);
      });

      it('unlocks before editing when status draft comes with edits of a locked timesheet', async () => {
        const { tenant, inbound, api } = await company();
        const created = await inbound.send('timesheet.created', { emp_number: 'E-1', timesheet_date: '2026-03-02', status: 'locked' });
        const before = (await outboxOf(stack, tenant.companyId)).length;
        const response = await inbound.send('timesheet.updated', { emp_number: 'E-1', timesheet_date: '2026-03-02', status: 'draft', notes: 'Corrected' });
        await expectRecorded(stack, response, 'timesheet.unlocked');
        expect((await outboxOf(stack, tenant.companyId)).slice(before).map((e) => e.event_type)).toEqual(['timesheet.unlocked', 'timesheet.updated']);
        expect((await api.get(`/timesheets/${created.body.record_id}`)).body).toMatchObject({ status: 'draft', notes: 'Corrected' });
      });
    });

    it('timesheet.deleted deletes a draft and answers 404 for a day without a timesheet', async () => {
      const { inbound, api } = await company();
      const created = await inbound.send('timesheet.created', { emp_number: 'E-1', timesheet_date: '2026-03-04' });
      const response = await inbound.send('timesheet.deleted', { emp_number: 'E-1', timesheet_date: '2026-03-04' });
      await expectRecorded(stack, response, 'timesheet.deleted');
      expect((await api.get(`/timesheets/${created.body.record_id}`)).status).toBe(404);
      expectError(await inbound.send('timesheet.deleted', { emp_number: 'E-1', timesheet_date: '2026-03-04' }), 404, 'NOT_FOUND', 'data.timesheet_date');
    });
  });
});
