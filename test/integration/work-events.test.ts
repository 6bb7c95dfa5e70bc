import { type Delivery, eventDataProblems, SHAPE_A_ENVELOPE, SHAPE_B_ENVELOPE } from '../helpers/event-contract';
import { type EventDeliveries, type OutboxRow, startEventDeliveries } from '../helpers/event-deliveries';
import { projectData, seedEmployee } from '../helpers/fixtures';
import { type Tenant, type TestStack } from '../helpers/stack';
import { type RegisteredEndpoint, verifiedAsReceiver } from '../helpers/webhooks';

/** What a shape A endpoint receives: the 6.1 names, and the catalog-only events by their 6.2 names. */
const TO_SHAPE_A = [
  'employee.assigned',
  'project.closed',
  'project.created',
  'project.deleted',
  'project.updated',
  'work_order.created',
  'work_order.deleted',
  'work_order.scheduled',
  'work_order.status_changed',
  'work_order.updated',
  'workorder.cancelled',
  'workorder.completed',
  'workorder.started',
];
/** What a shape B endpoint receives: the 6.2 names, and the events the catalog does not describe (or delivers in shape A) by their 6.1 names. */
const TO_SHAPE_B = [
  'employee.assigned',
  'project.closed',
  'project.created',
  'project.deleted',
  'project.updated',
  'work_order.scheduled',
  'work_order.status_changed',
  'workorder.cancelled',
  'workorder.completed',
  'workorder.created',
  'workorder.deleted',
  'workorder.started',
  'workorder.updated',
];
/** The events this test is about; project.created also makes customer, location and contact events. */
const ofInterest = (name: string) => /^(project\.|work_order\.|workorder\.|employee\.assigned$)/.test(name);
/** Names whose data is described by schemas/events/b. */
const isCatalogName = (name: string) => name.startsWith('workorder.') || name === 'employee.assigned';

/**
 * Every project, work order and employee.assigned event, made through REST and inbound operations, delivered
 * over HTTPS to a shape A and a shape B endpoint subscribed to `*`, each checked against schemas/events/.
 */
describe('project, work order and employee.assigned events on real HTTPS deliveries (shapes A and B)', () => {
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

  beforeAll(async () => {
    events = await startEventDeliveries();
    ({ stack, owner, restKey, inboundKey, endpointA, endpointB } = events);
    // Made with the endpoints' own key, so echo prevention keeps their employee.created events back.
    ids.lead = await seedEmployee(stack, owner, { empNumber: 'EV-L', name: 'Lena Lead', employeeType: 'site_lead' });
    ids.crew = await seedEmployee(stack, owner, { empNumber: 'EV-C', name: 'Cruz Crew' });
    ids.owner = await seedEmployee(stack, owner, { empNumber: 'EV-O', name: 'Orla Owner', employeeType: 'project_owner' });

    const rest = events.rest;
    const send = async (eventType: string, data: Record<string, unknown>) => (await events.send(eventType, data)).body;

    ids.tower = (await send('project.created', projectData('EV-1', { internal_manager_emp_number: 'EV-O' }))).record_id;
    await rest('PUT', `/projects/${ids.tower}`, { description: 'Fourteen storeys', color_index: 4 });
    ids.frame = (
      await send('work_order.created', {
        work_order_number: 'EV-WO-1',
        project_code: 'EV-1',
        phase_name: 'Framing',
        start_date: '2026-05-04',
        end_date: '2026-05-08',
        start_time: '07:00',
        site_lead_emp_number: 'EV-L',
        assigned_emp_numbers: ['EV-C'],
        scope_of_work: { checklists: [{ checklist_name: 'Prep', items: [{ item_name: 'Layout', status: 'pending' }] }] },
        additional_labor_cost: 1200,
      })
    ).record_id;
    await rest('PUT', `/work-orders/${ids.frame}`, { priority: 'high', people_required: 5 });
    await rest('PUT', `/work-orders/${ids.frame}`, { end_date: '2026-05-11' });
    await send('work_order.updated', { work_order_number: 'EV-WO-1', status: 'in_progress' });
    await rest('PUT', `/work-orders/${ids.frame}`, { status: 'complete' });
    // Given neither scheduler notes, scope nor labour cost.
    ids.paint = (await rest('POST', '/work-orders', { title: 'Paint', project_id: ids.tower })).id;
    await rest('PUT', `/work-orders/${ids.paint}`, { status: 'cancelled' });
    ids.clean = (await send('work_order.created', { project_code: 'EV-1', phase_name: 'Cleanup' })).record_id;
    ids.trash = (await send('work_order.created', { project_code: 'EV-1', phase_name: 'Duplicate entry' })).record_id;
    await send('work_order.deleted', { project_code: 'EV-1', phase_name: 'Duplicate entry', reason: 'Entered twice' });
    await send('project.closed', { project_code: 'EV-1', close_work_orders: true });
    ids.scrap = (await send('project.created', projectData('EV-2', { contacts: [] }))).record_id;
    await rest('DELETE', `/projects/${ids.scrap}`);

    // Echo prevention keeps back the employee.created events made with the owner's key.
    ({ outbox, inA, inB } = await events.collect(ofInterest));
  });

  afterAll(() => events?.close());

  const named = (deliveries: Delivery[], event: string) => deliveries.filter((d) => d.event === event);
  const one = (deliveries: Delivery[], event: string, id: string) => {
    const found = deliveries.filter((d) => d.event === event && d.body.data.id === id);
    expect({ event, id, count: found.length }).toEqual({ event, id, count: 1 });
    return found[0]!.body.data;
  };

  it('delivers every event of 6.1 and 6.2 about projects, work orders and assignments to both endpoints, each once', () => {
    expect([...new Set(inA.map((d) => d.event))].sort()).toEqual(TO_SHAPE_A);
    expect([...new Set(inB.map((d) => d.event))].sort()).toEqual(TO_SHAPE_B);
    expect(inA).toHaveLength(outbox.length);
    expect(inB).toHaveLength(outbox.length);
    expect(new Set(inA.map((d) => d.request.headers['x-webhook-id'])).size).toBe(inA.length);
  });

  it('signs every delivery as a receiver verifies it', () => {
    expect(inA.filter((d) => !verifiedAsReceiver(endpointA.secret, d.request)).map((d) => d.event)).toEqual([]);
    expect(inB.filter((d) => !verifiedAsReceiver(endpointB.secret, d.request)).map((d) => d.event)).toEqual([]);
  });

  it('sends shape A envelopes to the shape A endpoint, data exactly as its schema says', () => {
    const problems: Record<string, string[]> = {};
    for (const d of inA) {
      expect({ event: d.event, keys: Object.keys(d.body).sort() }).toEqual({ event: d.event, keys: SHAPE_A_ENVELOPE });
      expect(d.body.event_type).toBe(d.event);
      const found = eventDataProblems(isCatalogName(d.event) ? 'b' : 'a', d.event, d.body.data);
      if (found.length) problems[`${d.event} ${d.body.event_id}`] = found;
    }
    expect(problems).toEqual({});
  });

  it('sends the shape B endpoint the catalog envelope for catalog events and shape A for the others, data exactly as its schema says', () => {
    const problems: Record<string, string[]> = {};
    for (const d of inB) {
      const catalog = d.event.startsWith('workorder.') || d.event === 'employee.assigned' || (d.event.startsWith('project.') && d.event !== 'project.closed');
      expect({ event: d.event, keys: Object.keys(d.body).sort() }).toEqual({ event: d.event, keys: catalog ? SHAPE_B_ENVELOPE : SHAPE_A_ENVELOPE });
      const found = eventDataProblems(catalog ? 'b' : 'a', d.event, d.body.data);
      if (found.length) problems[`${d.event} ${JSON.stringify(d.body.data).slice(0, 60)}`] = found;
    }
    expect(problems).toEqual({});
  });

  it('puts only the changed fields in changes: {old, new} in shape A, {from, to} in shape B', () => {
    expect(one(inA, 'project.updated', ids.tower!).changes).toEqual({ description: { old: 'Twelve-storey residential tower', new: 'Fourteen storeys' }, color_index: { old: null, new: 4 } });
    expect(one(inB, 'project.updated', ids.tower!).changes).toEqual({ description: { from: 'Twelve-storey residential tower', to: 'Fourteen storeys' }, color_index: { from: null, to: 4 } });
    const updatesA = named(inA, 'work_order.updated').filter((d) => d.body.data.id === ids.frame);
    expect(updatesA.map((d) => d.body.data.changes)).toEqual([
      { priority: { old: 'normal', new: 'high' }, people_required: { old: null, new: 5 } },
      { end_date: { old: '2026-05-08', new: '2026-05-11' } },
      { status: { old: 'scheduled', new: 'in_progress' } },
      { status: { old: 'in_progress', new: 'complete' } },
    ]);
    const updatesB = named(inB, 'workorder.updated').filter((d) => d.body.data.id === ids.frame);
    expect(updatesB.map((d) => d.body.data.changes)).toEqual([
      { priority: { from: 'normal', to: 'high' }, people_required: { from: null, to: 5 } },
      { end_date: { from: '2026-05-08', to: '2026-05-11' } },
      { status: { from: 'scheduled', to: 'in_progress' } },
      { status: { from: 'in_progress', to: 'complete' } },
    ]);
  });

  it('carries additional_labor_cost as a number and scheduler_notes and scope_of_work as objects in work_order.created, never null', () => {
    expect(one(inA, 'work_order.created', ids.frame!)).toMatchObject({
      additional_labor_cost: 1200,
      scope_of_work: { checklists: [{ title: 'Prep', items: [{ text: 'Layout', completed: false }] }] },
      site_lead: { id: ids.lead, name: 'Lena Lead' },
    });
    expect(one(inA, 'work_order.created', ids.paint!)).toMatchObject({
      additional_labor_cost: 0,
      scheduler_notes: { subtrade_required: null, scheduling_insights: null },
      scope_of_work: { checklists: [] },
    });
  });

  it('fires work_order.scheduled on creation with dates and on a change of dates, not for a work order without dates', () => {
    const scheduled = named(inA, 'work_order.scheduled');
    expect(scheduled.map((d) => [d.body.data.id, d.body.data.end_date])).toEqual([
      [ids.frame, '2026-05-08'],
      [ids.frame, '2026-05-11'],
    ]);
    expect(scheduled[0]!.body.data.assigned_employees).toEqual([
      { id: ids.lead, emp_number: 'EV-L', name: 'Lena Lead', role: 'site_lead' },
      { id: ids.crew, emp_number: 'EV-C', name: 'Cruz Crew', role: 'crew_member' },
    ]);
  });

  it('fires workorder.started, workorder.completed and workorder.cancelled on those transitions, with status_changed', () => {
    expect(one(inB, 'workorder.started', ids.frame!)).toMatchObject({ status: 'in_progress', previousStatus: 'scheduled', changedBy: inboundKey.apiKeyId });
    expect(one(inB, 'workorder.completed', ids.frame!)).toMatchObject({ status: 'complete', previousStatus: 'in_progress', changedBy: restKey.apiKeyId });
    expect(one(inB, 'workorder.cancelled', ids.paint!)).toMatchObject({ status: 'cancelled', previousStatus: 'open' });
    // Shape A endpoints get them too, with the catalog data.
    expect(one(inA, 'workorder.started', ids.frame!)).toEqual(one(inB, 'workorder.started', ids.frame!));
    const changes = named(inA, 'work_order.status_changed').map((d) => [d.body.data.work_order_number, d.body.data.previous_status, d.body.data.new_status]);
    expect(changes).toEqual([
      ['EV-WO-1', 'scheduled', 'in_progress'],
      ['EV-WO-1', 'in_progress', 'complete'],
      [expect.any(String), 'open', 'cancelled'],
      // Closed with the project.
      [expect.any(String), 'open', 'closed'],
    ]);
  });

  it('fires employee.assigned for the project owner and for each employee put on a work order', () => {
    // In the order of the outbox (the shape A deliveries carry the same catalog data).
    const assigned = named(inA, 'employee.assigned').map((d) => d.body.data);
    expect(assigned.map((a) => [a.employee.emp_number, a.assignment_type, a.role, a.work_order?.work_order_number ?? null])).toEqual([
      ['EV-O', 'project', 'project_owner', null],
      ['EV-L', 'work_order', 'site_lead', 'EV-WO-1'],
      ['EV-C', 'work_order', 'crew_member', 'EV-WO-1'],
    ]);
    expect(assigned[1]).toEqual({
      employee: { id: ids.lead, emp_number: 'EV-L', name: 'Lena Lead' },
      assignment_type: 'work_order',
      work_order: { id: ids.frame, work_order_number: 'EV-WO-1', phase_name: 'Framing' },
      project: { id: ids.tower, project_code: 'EV-1', project_name: 'Tower EV-1' },
      role: 'site_lead',
      assigned_at: expect.any(String),
      assigned_by: inboundKey.apiKeyId,
    });
  });

  it('always carries id and closed_at in project.closed, to both endpoints in shape A', () => {
    const closedA = one(inA, 'project.closed', ids.tower!);
    expect(closedA).toEqual({ id: ids.tower, project_code: 'EV-1', project_name: 'Tower EV-1', closed_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) });
    expect(one(inB, 'project.closed', ids.tower!)).toEqual(closedA);
  });

  it('describes deletions with who made them and, in the catalog, the reason', () => {
    expect(one(inA, 'work_order.deleted', ids.trash!)).toMatchObject({ deleted_by: inboundKey.apiKeyId });
    expect(one(inB, 'workorder.deleted', ids.trash!)).toMatchObject({ reason: 'Entered twice' });
    expect(one(inA, 'project.deleted', ids.scrap!)).toMatchObject({ deleted_by: restKey.apiKeyId });
    expect(one(inB, 'project.deleted', ids.scrap!)).toMatchObject({ id: ids.scrap });
  });
});
