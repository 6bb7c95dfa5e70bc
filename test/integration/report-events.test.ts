import { type Delivery, eventDataProblems, SHAPE_A_ENVELOPE, SHAPE_B_ENVELOPE } from '../helpers/event-contract';
import { type EventDeliveries, type OutboxRow, startEventDeliveries } from '../helpers/event-deliveries';
import { seedEmployee, seedProject } from '../helpers/fixtures';
import { verifiedAsReceiver } from '../helpers/webhooks';

const EVENT_NAMES = ['report.completion_approved', 'report.completion_submitted', 'report.daily_submitted', 'work_order.status_changed', 'workorder.completed'];
/** Only 6.2 describes it: shape A endpoints get its catalog data in the shape A envelope. */
const CATALOG_ONLY = ['workorder.completed'];

/**
 * Every report event, and the work order events a completion causes, made through REST and inbound
 * operations, delivered over HTTPS to a shape A and a shape B endpoint subscribed to `*`, and checked against
 * webhooks.md 6, 6.1, 6.2 and schemas/events/.
 */
describe('report events on real HTTPS deliveries (shapes A and B)', () => {
  let events: EventDeliveries;
  let outbox: OutboxRow[];
  let inA: Delivery[];
  let inB: Delivery[];
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    events = await startEventDeliveries();
    const { stack, restKey, rest } = events;
    const send = async (eventType: string, data: Record<string, unknown>) => (await events.send(eventType, data)).body;

    const projectId = await seedProject(stack, restKey, 'EV-RPT');
    ids.maria = await seedEmployee(stack, restKey, { empNumber: 'EMP-0042', name: 'Maria Lopez', employeeType: 'site_lead' });
    const drywall = await rest('POST', '/work-orders', { title: 'Level 3 drywall', project_id: projectId, status: 'in_progress', site_lead_id: ids.maria });
    const paint = await rest('POST', '/work-orders', { title: 'Level 3 paint', project_id: projectId, status: 'in_progress' });
    Object.assign(ids, { drywall: drywall.id, paint: paint.id });

    // Through REST: a daily report approved by a manager, and a completion report that completes its work order at once.
    ids.daily = (await rest('POST', '/daily-reports', { work_order_id: drywall.id, report_date: '2026-03-03', submitted_by_id: ids.maria, notes: 'Boarded', weather_conditions: 'Rain', hours_worked: 8, photos: ['https://files.example.com/a.jpg'] })).id;
    await rest('POST', `/daily-reports/${ids.daily}/approve`, { approval_notes: 'ok' });
    ids.auto = (await rest('POST', '/completion-reports', { work_order_id: paint.id, requires_approval: false, is_auto_approved: true, completion_checklist: [{ item_name: 'Cleaned', status: 'completed' }] })).id;
    // Through inbound: a daily report, then a completion report approved afterwards.
    ids.dailyInbound = (await send('report.daily_submitted', { work_order_number: drywall.work_order_number, report_date: '2026-03-04', is_auto_approved: true })).record_id;
    ids.completion = (await send('report.completion_submitted', { work_order_number: drywall.work_order_number, submitted_by: 'EMP-0042', completion_summary: 'Done', scope_checklist: [{ item_name: 'Board', status: 'completed' }] })).record_id;
    await send('report.completion_approved', { work_order_number: drywall.work_order_number, approved_by: 'EMP-0042', approval_notes: 'Walked it' });

    ({ outbox, inA, inB } = await events.collect((name) => EVENT_NAMES.includes(name)));
  }, 120_000);

  afterAll(() => events?.close());

  const about = (deliveries: Delivery[], event: string, predicate: (data: any) => boolean = () => true) => deliveries.filter((d) => d.event === event && predicate(d.body.data));

  it('delivers every event, once, to both endpoints, signed with the endpoint secret', () => {
    expect([...new Set(outbox.map((e) => e.event_type))].sort()).toEqual(EVENT_NAMES);
    expect(outbox.map((e) => e.event_type).sort()).toEqual([
      'report.completion_approved',
      'report.completion_submitted',
      'report.completion_submitted',
      'report.daily_submitted',
      'report.daily_submitted',
      'work_order.status_changed',
      'work_order.status_changed',
      'workorder.completed',
      'workorder.completed',
    ]);
    for (const [deliveries, endpoint] of [[inA, events.endpointA], [inB, events.endpointB]] as const) {
      expect(deliveries).toHaveLength(outbox.length);
      expect(deliveries.filter((d) => !verifiedAsReceiver(endpoint.secret, d.request)).map((d) => d.event)).toEqual([]);
    }
    expect(inA.map((d) => d.body.event_id).sort()).toEqual(outbox.map((e) => e.id).sort());
  });

  it('sends shape A endpoints the shape A envelope with data exactly as its schema (6.2 data for workorder.completed)', () => {
    for (const delivery of inA) {
      expect({ event: delivery.event, keys: Object.keys(delivery.body).sort() }).toEqual({ event: delivery.event, keys: SHAPE_A_ENVELOPE });
      const shape = CATALOG_ONLY.includes(delivery.event) ? 'b' : 'a';
      expect({ event: delivery.event, problems: eventDataProblems(shape, delivery.event, delivery.body.data) }).toEqual({ event: delivery.event, problems: [] });
    }
  });

  it('sends shape B endpoints workorder.completed in shape B, and the 6.1-only events in shape A', () => {
    for (const delivery of inB) {
      const catalog = CATALOG_ONLY.includes(delivery.event);
      expect({ event: delivery.event, keys: Object.keys(delivery.body).sort() }).toEqual({ event: delivery.event, keys: catalog ? SHAPE_B_ENVELOPE : SHAPE_A_ENVELOPE });
      expect({ event: delivery.event, problems: eventDataProblems(catalog ? 'b' : 'a', delivery.event, delivery.body.data) }).toEqual({ event: delivery.event, problems: [] });
    }
  });

  it('describes the reports as 6.1 does', () => {
    expect(about(inA, 'report.daily_submitted', (d) => d.report_id === ids.daily)[0]!.body.data).toEqual({
      report_id: ids.daily,
      work_order_id: ids.drywall,
      work_order_number: expect.stringMatching(/^WO-/),
      phase_name: 'Level 3 drywall',
      project_name: 'Project EV-RPT',
      report_date: '2026-03-03',
      report_type: 'daily',
      submitted_by: { user_id: null, employee_id: ids.maria, name: 'Maria Lopez' },
      notes: 'Boarded',
      weather: 'Rain',
      crew_count: 1,
      hours_worked: 8,
      photos: ['https://files.example.com/a.jpg'],
      is_auto_approved: false,
      submitted_at: expect.any(String),
    });
    expect(about(inB, 'report.daily_submitted', (d) => d.report_id === ids.dailyInbound)[0]!.body.data).toMatchObject({ is_auto_approved: true, submitted_by: null, crew_count: 1 });
    expect(about(inA, 'report.completion_submitted', (d) => d.report_id === ids.auto)[0]!.body.data).toMatchObject({
      requires_approval: false,
      is_auto_approved: true,
      scope_checklist: { items: [], completion_percentage: null },
      completion_checklist: { items: [{ item: 'Cleaned', completed: true, notes: null }] },
    });
    expect(about(inA, 'report.completion_approved')[0]!.body.data).toEqual({
      report_id: ids.completion,
      work_order_id: ids.drywall,
      work_order_number: expect.stringMatching(/^WO-/),
      phase_name: 'Level 3 drywall',
      project_name: 'Project EV-RPT',
      approved_by: { user_id: null, employee_id: ids.maria, name: 'Maria Lopez', role: null },
      approval_notes: 'Walked it',
      approved_at: expect.any(String),
    });
  });

  it('completes each work order with work_order.status_changed (A) and workorder.completed (B)', () => {
    for (const id of [ids.drywall, ids.paint]) {
      expect(about(inA, 'work_order.status_changed', (d) => d.id === id)[0]!.body.data).toMatchObject({ previous_status: 'in_progress', new_status: 'complete' });
      expect(about(inB, 'workorder.completed', (d) => d.id === id)[0]!.body.data).toMatchObject({ status: 'complete', previousStatus: 'in_progress' });
    }
  });
});
