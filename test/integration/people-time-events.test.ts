import { type Delivery, eventDataProblems, SHAPE_A_ENVELOPE, SHAPE_B_ENVELOPE } from '../helpers/event-contract';
import { type EventDeliveries, type OutboxRow, startEventDeliveries } from '../helpers/event-deliveries';
import { seedProject } from '../helpers/fixtures';
import { type Tenant, type TestStack } from '../helpers/stack';
import { type RegisteredEndpoint, verifiedAsReceiver } from '../helpers/webhooks';

const EVENT_NAMES = [
  'employee.created',
  'employee.deleted',
  'employee.updated',
  'time_off.created',
  'time_off.deleted',
  'time_off.updated',
  'timesheet.created',
  'timesheet.deleted',
  'timesheet.locked',
  'timesheet.processed',
  'timesheet.submitted',
  'timesheet.unlocked',
  'timesheet.updated',
  'timesheets.processed.batch',
];
/** The events shape B (6.2) describes; the others reach shape B endpoints in shape A. */
const SHAPE_B_NAMES = EVENT_NAMES.filter((n) => n.startsWith('employee.') || n.startsWith('time_off.') || ['timesheet.created', 'timesheet.updated', 'timesheet.deleted'].includes(n));
/** Only 6.2 describes it: shape A endpoints get its catalog data in the shape A envelope. */
const CATALOG_ONLY = ['timesheet.deleted'];

/**
 * Every employee, time off and timesheet event, and the payroll batch, made through REST and inbound
 * operations, delivered over HTTPS to a shape A and a shape B endpoint subscribed to `*`, and checked against
 * webhooks.md 6, 6.1, 6.2 and schemas/events/.
 */
describe('employee, time off and timesheet events on real HTTPS deliveries (shapes A and B)', () => {
  let events: EventDeliveries;
  let stack: TestStack;
  let owner: Tenant;
  let restKey: Tenant;
  let inboundKey: Tenant;
  let endpointA: RegisteredEndpoint;
  let endpointB: RegisteredEndpoint;
  let outbox: OutboxRow[];
  let inA: Delivery[];
  let inB: Delivery[];
  const ids: Record<string, string> = {};
  let payrollRun: any;

  beforeAll(async () => {
    events = await startEventDeliveries();
    ({ stack, owner, restKey, inboundKey, endpointA, endpointB } = events);

    const rest = events.rest;
    const send = async (eventType: string, data: Record<string, unknown>) => (await events.send(eventType, data)).body;

    for (const name of ['Drywall', 'Working at heights', 'First aid']) await rest('POST', '/skills', { name });
    // The project and work order the entries bill to; their own events are not what this file is about.
    const workOrder = await rest('POST', '/work-orders', { title: 'Level 3 drywall', project_id: await seedProject(stack, restKey) });

    // Through REST.
    const maria = await rest('POST', '/employees', {
      emp_number: 'EMP-0042',
      name: 'Maria Lopez',
      email: 'maria.lopez@example.com',
      phone: '+1-416-555-0142',
      department_name: 'Interiors',
      role_name: 'Drywall Foreman',
      employee_type: 'site_lead',
      employee_skills: ['Drywall', 'Working at heights'],
      start_date: '2021-05-17',
      emergency_contact_name: 'Luis Lopez',
      emergency_contact_phone: '+1-416-555-0199',
    });
    await rest('PUT', `/employees/${maria.id}`, { phone: '+1-416-555-0143', employee_skills: ['Drywall', 'Working at heights', 'First aid'] });
    const vacation = await rest('POST', '/time-off', { employee_id: maria.id, start_date: '2026-07-06', end_date: '2026-07-10', reason: 'Family trip', status: 'pending' });
    await rest('PUT', `/time-off/${vacation.id}`, { status: 'approved', notes: 'Enjoy' });
    const dentist = await rest('POST', '/time-off', { employee_id: maria.id, start_date: '2026-07-14', end_date: '2026-07-14', start_time: '09:00:00', end_time: '11:00:00', time_off_type: 'personal' });
    await rest('DELETE', `/time-off/${dentist.id}`);

    const monday = await rest('POST', '/timesheets', {
      employee_id: maria.id,
      timesheet_date: '2026-03-02',
      entries: [{ entry_date: '2026-03-02', hours: 8, work_type_code: 'REG', work_order_number: workOrder.work_order_number, start_time: '07:00', end_time: '15:30' }],
    });
    const [regular] = monday.entries;
    const edited = await rest('PUT', `/timesheets/${monday.id}`, {
      entries: [
        { entry_id: regular.id, hours: 7.5 },
        { entry_date: '2026-03-02', hours: 1.5, work_type_code: 'OT', work_order_number: workOrder.work_order_number, notes: 'Finish taping' },
      ],
    });
    await rest('PUT', `/timesheets/${monday.id}`, { notes: 'Overtime approved by site lead.', total_hours: 9 });
    await rest('DELETE', `/timesheets/${monday.id}/entries/${edited.entries[1].id}`);
    for (const action of ['submit', 'lock', 'unlock', 'submit', 'lock', 'process']) await rest('POST', `/timesheets/${monday.id}/${action}`);
    const tuesday = await rest('POST', '/timesheets', { employee_id: maria.id, timesheet_date: '2026-03-03', total_hours: 8, status: 'locked' });
    const wednesday = await rest('POST', '/timesheets', { employee_id: maria.id, timesheet_date: '2026-03-04', status: 'submitted' });
    await rest('POST', `/timesheets/${wednesday.id}/lock`);
    const draft = await rest('POST', '/timesheets', { employee_id: maria.id, timesheet_date: '2026-03-05' });
    await rest('DELETE', `/timesheets/${draft.id}`);
    payrollRun = await rest('POST', '/payroll-runs', { period_start: '2026-03-01', period_end: '2026-03-07' });
    Object.assign(ids, { maria: maria.id, vacation: vacation.id, dentist: dentist.id, monday: monday.id, tuesday: tuesday.id, wednesday: wednesday.id, draft: draft.id, regular: regular.id });

    // Through inbound operations.
    ids.dev = (await send('employee.created', { emp_number: 'EMP-0057', name: 'Dev Patel', email: 'dev@example.com', employee_type: 'site_worker', department_name: 'interiors' })).record_id;
    await send('employee.updated', { emp_number: 'emp-0057', employee_type: 'site_lead', role_name: 'Taper' });
    ids.sick = (await send('time_off.created', { emp_number: 'EMP-0057', start_date: '2026-04-01', end_date: '2026-04-01', time_off_type: 'sick_leave' })).record_id;
    await send('time_off.updated', { emp_number: 'EMP-0057', start_date: '2026-04-01', end_date: '2026-04-01', start_time: '12:00:00', end_time: '16:00:00', reason: 'Appointment' });
    await send('time_off.deleted', { emp_number: 'EMP-0057', start_date: '2026-04-01', end_date: '2026-04-01' });
    ids.devSheet = (await send('timesheet.created', { emp_number: 'EMP-0057', timesheet_date: '2026-04-02', entries: [{ entry_date: '2026-04-02', hours: 8, work_type_code: 'VAC' }] })).record_id;
    await send('timesheet.updated', { emp_number: 'EMP-0057', timesheet_date: '2026-04-02', notes: 'Vacation day' });
    await send('timesheet.deleted', { emp_number: 'EMP-0057', timesheet_date: '2026-04-02' });
    await send('employee.deleted', { emp_number: 'EMP-0057' });

    ({ outbox, inA, inB } = await events.collect((name) => EVENT_NAMES.includes(name)));
  }, 120_000);

  afterAll(() => events?.close());

  const aboutA = (event: string, predicate: (data: any) => boolean = () => true) => inA.filter((d) => d.event === event && predicate(d.body.data));
  const aboutB = (event: string, predicate: (data: any) => boolean = () => true) => inB.filter((d) => d.event === event && predicate(d.body.data));

  it('delivers every event of these records, once, to both endpoints', () => {
    expect([...new Set(outbox.map((e) => e.event_type))].sort()).toEqual(EVENT_NAMES);
    expect([...new Set(inA.map((d) => d.event))].sort()).toEqual(EVENT_NAMES);
    expect([...new Set(inB.map((d) => d.event))].sort()).toEqual(EVENT_NAMES);
    expect(inA).toHaveLength(outbox.length);
    expect(inB).toHaveLength(outbox.length);
    expect(inA.map((d) => d.body.event_id).sort()).toEqual(outbox.map((e) => e.id).sort());
    expect(new Set(inA.map((d) => d.request.headers['x-webhook-id'])).size).toBe(outbox.length);
  });

  it('signs every delivery with its endpoint secret, as a receiver verifies it', () => {
    expect(inA.filter((d) => !verifiedAsReceiver(endpointA.secret, d.request)).map((d) => d.event)).toEqual([]);
    expect(inB.filter((d) => !verifiedAsReceiver(endpointB.secret, d.request)).map((d) => d.event)).toEqual([]);
  });

  it('sends shape A endpoints the shape A envelope with data exactly as schemas/events/a/<event>.json (6.2 data for timesheet.deleted)', () => {
    const problems: Record<string, unknown> = {};
    for (const delivery of inA) {
      expect({ event: delivery.event, keys: Object.keys(delivery.body).sort() }).toEqual({ event: delivery.event, keys: SHAPE_A_ENVELOPE });
      expect(delivery.body).toMatchObject({ event_type: delivery.event, company_id: owner.companyId });
      const shape = CATALOG_ONLY.includes(delivery.event) ? 'b' : 'a';
      const found = eventDataProblems(shape, delivery.event, delivery.body.data);
      if (found.length) problems[`${delivery.event} ${delivery.body.event_id}`] = found;
    }
    expect(problems).toEqual({});
  });

  it('sends shape B endpoints the events 6.2 describes in the shape B envelope, data exactly as schemas/events/b/<event>.json', () => {
    const catalog = inB.filter((d) => SHAPE_B_NAMES.includes(d.event));
    expect(catalog.length).toBe(outbox.filter((e) => SHAPE_B_NAMES.includes(e.event_type)).length);
    for (const delivery of catalog) {
      expect({ event: delivery.event, keys: Object.keys(delivery.body).sort() }).toEqual({ event: delivery.event, keys: SHAPE_B_ENVELOPE });
      expect({ event: delivery.event, problems: eventDataProblems('b', delivery.event, delivery.body.data) }).toEqual({ event: delivery.event, problems: [] });
    }
  });

  it('sends shape B endpoints the lifecycle and batch events (6.1 only) in shape A', () => {
    const others = inB.filter((d) => !SHAPE_B_NAMES.includes(d.event));
    expect(others.map((d) => d.event).sort()).toEqual(outbox.filter((e) => !SHAPE_B_NAMES.includes(e.event_type)).map((e) => e.event_type).sort());
    for (const delivery of others) {
      expect(Object.keys(delivery.body).sort()).toEqual(SHAPE_A_ENVELOPE);
      expect(eventDataProblems('a', delivery.event, delivery.body.data)).toEqual([]);
    }
  });

  it('describes employees in each shape, with the changes of employee.updated in B', () => {
    const [a] = aboutA('employee.created', (d) => d.id === ids.maria);
    expect(a!.body.data).toEqual({
      id: ids.maria,
      emp_number: 'EMP-0042',
      name: 'Maria Lopez',
      email: 'maria.lopez@example.com',
      phone: '+1-416-555-0142',
      role: 'Drywall Foreman',
      department: 'Interiors',
      employee_type: 'site_lead',
      employee_skills: ['Drywall', 'Working at heights'],
      start_date: '2021-05-17',
      emergency_contact_name: 'Luis Lopez',
      emergency_contact_phone: '+1-416-555-0199',
      is_project_owner: false,
      is_site_lead: true,
      is_site_worker: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(aboutA('employee.updated', (d) => d.id === ids.maria)[0]!.body.data).toMatchObject({ phone: '+1-416-555-0143', employee_skills: ['Drywall', 'First aid', 'Working at heights'] });
    expect(aboutB('employee.updated', (d) => d.id === ids.maria)[0]!.body.data.changes).toEqual({
      phone: { from: '+1-416-555-0142', to: '+1-416-555-0143' },
      employee_skills: { added: ['First aid'], removed: [] },
    });
    expect(aboutB('employee.updated', (d) => d.id === ids.dev)[0]!.body.data).toMatchObject({
      department: 'Interiors',
      role: 'Taper',
      employee_type: 'site_lead',
      changes: { employee_type: { from: 'site_worker', to: 'site_lead' }, role_name: { from: null, to: 'Taper' } },
    });
    expect(aboutB('employee.deleted', (d) => d.id === ids.dev)[0]!.body.data).toEqual({ id: ids.dev, emp_number: 'EMP-0057', name: 'Dev Patel', email: 'dev@example.com', deleted_at: expect.any(String) });
  });

  it('maps time off changes to {from, to} in both shapes', () => {
    const expected = { status: { from: 'pending', to: 'approved' }, notes: { from: null, to: 'Enjoy' } };
    expect(aboutA('time_off.updated', (d) => d.id === ids.vacation)[0]!.body.data.changes).toEqual(expected);
    expect(aboutB('time_off.updated', (d) => d.id === ids.vacation)[0]!.body.data.changes).toEqual(expected);
    expect(aboutB('time_off.updated', (d) => d.id === ids.sick)[0]!.body.data.changes).toEqual({
      start_time: { from: null, to: '12:00:00' },
      end_time: { from: null, to: '16:00:00' },
      reason: { from: null, to: 'Appointment' },
    });
    expect(aboutA('time_off.created', (d) => d.id === ids.dentist)[0]!.body.data).toMatchObject({ start_time: '09:00:00', end_time: '11:00:00', time_off_type: 'personal', status: 'approved' });
    expect(aboutA('time_off.deleted', (d) => d.id === ids.dentist)[0]!.body.data).toEqual({
      id: ids.dentist,
      emp_number: 'EMP-0042',
      employee_name: 'Maria Lopez',
      start_date: '2026-07-14',
      end_date: '2026-07-14',
      deleted_at: expect.any(String),
    });
  });

  it('sends one timesheet.updated per change: update_type and the entry in A, the change in B', () => {
    const updates = aboutA('timesheet.updated', (d) => d.timesheet_id === ids.monday).map((d) => [d.body.data.update_type, d.body.data.entry?.hours ?? null]);
    expect(updates).toEqual([
      ['entry_updated', 7.5],
      ['entry_added', 1.5],
      ['notes_updated', null],
      ['entry_deleted', 1.5],
    ]);
    const [updated] = aboutA('timesheet.updated', (d) => d.update_type === 'entry_updated');
    expect(updated!.body.data.entry).toEqual({
      entry_id: ids.regular,
      entry_date: '2026-03-02',
      work_order_id: expect.any(String),
      work_order_name: expect.stringMatching(/^WO-\d{6} Level 3 drywall$/),
      work_type_id: expect.any(String),
      work_type_name: 'Regular',
      hours: 7.5,
      notes: null,
    });
    const changes = aboutB('timesheet.updated', (d) => d.id === ids.monday).map((d) => d.body.data.changes);
    expect(changes[0].entries).toEqual({
      added: [expect.objectContaining({ hours: 7.5, work_type_code: 'REG', start_time: '07:00' })],
      removed: [expect.objectContaining({ hours: 8, work_type_code: 'REG' })],
    });
    expect(changes[2]).toEqual({ notes: { from: null, to: 'Overtime approved by site lead.' }, total_hours: { from: null, to: 9 } });
    expect(changes[3].entries).toEqual({ added: [], removed: [expect.objectContaining({ hours: 1.5, work_type_code: 'OT', notes: 'Finish taping' })] });
  });

  it('carries the lifecycle: submitted with entries, locked and unlocked and processed with who did it', () => {
    const mine = (event: string) => aboutA(event, (d) => d.timesheet_id === ids.monday).map((d) => d.body.data);
    expect(mine('timesheet.submitted')).toHaveLength(2);
    expect(mine('timesheet.submitted')[0].entries).toEqual([{ entry_date: '2026-03-02', work_order_id: expect.any(String), work_order_name: expect.any(String), hours: 7.5, notes: null }]);
    expect(mine('timesheet.locked')[0]).toMatchObject({ total_hours: 9, locked_by: restKey.apiKeyId, locked_by_name: 'test key', emp_number: 'EMP-0042' });
    expect(mine('timesheet.unlocked')[0]).toMatchObject({ unlocked_by: restKey.apiKeyId, unlocked_by_name: 'test key', timesheet_date: '2026-03-02' });
    expect(mine('timesheet.processed')).toEqual([expect.objectContaining({ processed_by: restKey.apiKeyId, total_hours: 9 })]);
  });

  it('processes the locked timesheets of the period in one payroll run: timesheet.processed each, then one batch with total_count', () => {
    expect(payrollRun).toMatchObject({ status: 'completed', total_count: 2, timesheet_ids: [ids.tuesday, ids.wednesday], period_start: '2026-03-01', period_end: '2026-03-07' });
    const processed = aboutA('timesheet.processed').map((d) => d.body.data.timesheet_id);
    expect(processed.sort()).toEqual([ids.monday, ids.tuesday, ids.wednesday].sort());
    const [batch] = aboutA('timesheets.processed.batch');
    expect(aboutA('timesheets.processed.batch')).toHaveLength(1);
    expect(batch!.body.data).toEqual({
      timesheets: [
        { id: ids.tuesday, timesheet_id: ids.tuesday, emp_number: 'EMP-0042', employee_name: 'Maria Lopez', timesheet_date: '2026-03-03', total_hours: 8 },
        { id: ids.wednesday, timesheet_id: ids.wednesday, emp_number: 'EMP-0042', employee_name: 'Maria Lopez', timesheet_date: '2026-03-04', total_hours: null },
      ],
      processed_by: restKey.apiKeyId,
      processed_by_name: 'test key',
      processed_at: expect.any(String),
      total_count: 2,
    });
  });

  it('gives timesheet.deleted the Monday and Sunday of its week, in both shapes', () => {
    const [b] = aboutB('timesheet.deleted', (d) => d.id === ids.draft);
    // 2026-03-05 is a Thursday.
    expect(b!.body.data).toEqual({ id: ids.draft, emp_number: 'EMP-0042', week_start: '2026-03-02', week_end: '2026-03-08', deleted_by: restKey.apiKeyId, reason: null });
    expect(aboutA('timesheet.deleted', (d) => d.id === ids.draft)[0]!.body.data).toEqual(b!.body.data);
    expect(aboutB('timesheet.deleted', (d) => d.id === ids.devSheet)[0]!.body.data).toMatchObject({ week_start: '2026-03-30', week_end: '2026-04-05', deleted_by: inboundKey.apiKeyId });
  });

  it('describes timesheet.created in each shape: entry_count in A, the entries of 2.8 in B', () => {
    expect(aboutA('timesheet.created', (d) => d.id === ids.monday)[0]!.body.data).toMatchObject({ timesheet_id: ids.monday, status: 'draft', entry_count: 1, employee_name: 'Maria Lopez' });
    expect(aboutB('timesheet.created', (d) => d.id === ids.monday)[0]!.body.data).toEqual({
      id: ids.monday,
      emp_number: 'EMP-0042',
      timesheet_date: '2026-03-02',
      status: 'draft',
      total_hours: null,
      entries: [{ entry_date: '2026-03-02', hours: 8, work_order_number: expect.stringMatching(/^WO-/), work_type_code: 'REG', work_type_name: 'Regular', start_time: '07:00', end_time: '15:30', notes: null }],
    });
    expect(aboutA('timesheet.created', (d) => d.id === ids.tuesday)[0]!.body.data.status).toBe('locked');
  });
});
