import { type InboundSender, inboundSender, type RestClient, restClient } from '../helpers/api-client';
import { countRows, outboxOf, projectData, seedEmployee } from '../helpers/fixtures';
import { createTenant, startStack, type Tenant, type TestStack } from '../helpers/stack';

/** Inbound work_order.created, .updated, .deleted and .search (webhooks.md 2.2, 2.10, 2.11, 4). */
describe('inbound work order operations', () => {
  let stack: TestStack;
  let tenant: Tenant;
  let inbound: InboundSender;
  let api: RestClient;
  const employees: Record<string, string> = {};

  beforeAll(async () => {
    stack = await startStack();
    tenant = await createTenant(stack.orm, ['admin']);
    inbound = inboundSender(stack, tenant);
    api = restClient(stack, tenant);
    for (const [empNumber, name] of [
      ['SL-1', 'Sita Lead'],
      ['CR-1', 'Cole Crew'],
      ['CR-2', 'Dana Crew'],
    ] as const) {
      employees[empNumber] = await seedEmployee(stack, tenant, { empNumber, name });
    }
    for (const code of ['WO-P1', 'WO-P2']) expect((await inbound.send('project.created', projectData(code))).status).toBe(200);
  });
  afterAll(() => stack.close());

  const projectId = async (code: string) => (await api.get(`/projects?project_code=${code}`)).body.data[0].id as string;
  const workOrder = async (id: string) => (await api.get(`/work-orders/${id}`)).body;
  const eventsOf = async (recordId: string) => (await outboxOf(stack, tenant.companyId)).filter((e) => (e.data?.id ?? e.catalog_data?.id) === recordId);

  describe('work_order.created', () => {
    it('creates the work order with every field of 2.2, resolving the project, the site lead and the crew', async () => {
      const response = await inbound.send('work_order.created', {
        work_order_number: 'IN-100',
        project_code: 'wo-p1',
        phase_name: 'Level 2 framing',
        status: 'scheduled',
        priority: 'urgent',
        start_date: '2026-05-04',
        end_date: '2026-05-08',
        start_time: '07:00',
        end_time: '15:30',
        people_skill_requirements: { Framing: 3 },
        performed_by: 'internal',
        site_lead_emp_number: 'SL-1',
        assigned_emp_numbers: ['CR-2', 'CR-1'],
        equipment: ['nail gun'],
        specialty_materials: ['LVL beams'],
        scheduler_notes: { subtrade_required: 'Electrician', scheduling_insights: 'Crane Tuesday' },
        custom_fields: { zone: 'North' },
        display_order: 2,
        require_daily_report: true,
        require_completion_report: false,
      });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ success: true, message: 'Work order IN-100 created', event_id: expect.any(String), record_id: expect.any(String) });
      expect(await workOrder(response.body.record_id)).toMatchObject({
        work_order_number: 'IN-100',
        title: 'Level 2 framing',
        project_id: await projectId('WO-P1'),
        status: 'scheduled',
        priority: 'urgent',
        start_date: '2026-05-04',
        end_date: '2026-05-08',
        start_time: '07:00',
        end_time: '15:30',
        people_skill_requirements: { Framing: 3 },
        performed_by: 'internal',
        site_lead_id: employees['SL-1'],
        assigned_to: [employees['CR-2'], employees['CR-1']],
        equipment: ['nail gun'],
        specialty_materials: ['LVL beams'],
        scheduler_notes: { subtrade_required: 'Electrician', scheduling_insights: 'Crane Tuesday' },
        custom_fields: { zone: 'North' },
        display_order: 2,
        require_daily_report: true,
        require_completion_report: false,
      });
      const created = (await eventsOf(response.body.record_id)).find((e) => e.event_type === 'work_order.created')!;
      expect(created.id).toBe(response.body.event_id);
      expect(created.data).toMatchObject({ site_lead: { id: employees['SL-1'], name: 'Sita Lead' }, additional_labor_cost: 0, scope_of_work: { checklists: [] } });
    });

    it.each([
      ['required_headcount', 7, 'people_required', 7],
      ['estimated_hours', '40 h', 'days_hours_required', '40 h'],
      ['requested_start_date', '2026-06-01', 'expected_start_date', '2026-06-01'],
      ['requested_end_date', '2026-06-05', 'expected_end_date', '2026-06-05'],
      ['requested_start_time', '06:30', 'expected_start_time', '06:30'],
      ['requested_end_time', '14:45', 'expected_end_time', '14:45'],
    ])('takes the alias %s as %s', async (alias, value, field, stored) => {
      const response = await inbound.send('work_order.created', { project_code: 'WO-P1', phase_name: `Alias ${alias}`, [alias]: value });
      expect(response.status).toBe(200);
      expect((await workOrder(response.body.record_id))[field]).toEqual(stored);
      // The same alias works in an update.
      const number = (await workOrder(response.body.record_id)).work_order_number;
      expect((await inbound.send('work_order.updated', { work_order_number: number, [alias]: null })).status).toBe(200);
      expect((await workOrder(response.body.record_id))[field]).toBeNull();
    });

    it('answers 400 naming the alias when it comes with the field it stands for', async () => {
      const before = await countRows(stack, 'work_orders', tenant.companyId);
      const response = await inbound.send('work_order.created', { project_code: 'WO-P1', phase_name: 'Twice', required_headcount: 3, people_required: 4 });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'data.required_headcount' } });
      expect(await countRows(stack, 'work_orders', tenant.companyId)).toBe(before);
    });

    it('converts scope_of_work: checklist_name to title, item_name to text, status to completed', async () => {
      const response = await inbound.send('work_order.created', {
        project_code: 'WO-P1',
        phase_name: 'Scoped',
        scope_of_work: {
          checklists: [
            { checklist_name: 'Before', items: [{ item_name: 'Lay out walls', status: 'complete' }, { item_name: 'Order studs', status: 'pending' }] },
            { checklist_name: 'After', items: [] },
          ],
        },
      });
      expect(response.status).toBe(200);
      const stored = {
        checklists: [
          { title: 'Before', items: [{ text: 'Lay out walls', completed: true }, { text: 'Order studs', completed: false }] },
          { title: 'After', items: [] },
        ],
      };
      expect((await workOrder(response.body.record_id)).scope_of_work).toEqual(stored);
      const created = (await eventsOf(response.body.record_id)).find((e) => e.event_type === 'work_order.created')!;
      expect(created.data.scope_of_work).toEqual(stored);
    });

    it.each([
      ['no project_code', { phase_name: 'x' }, 'data.project_code'],
      ['no phase_name', { project_code: 'WO-P1' }, 'data.phase_name'],
      ['a project_code of no project', { project_code: 'NOPE', phase_name: 'x' }, 'data.project_code'],
      ['an unknown site lead', { project_code: 'WO-P1', phase_name: 'x', site_lead_emp_number: 'NOBODY' }, 'data.site_lead_emp_number'],
      ['an unknown crew member', { project_code: 'WO-P1', phase_name: 'x', assigned_emp_numbers: ['CR-1', 'NOBODY'] }, 'data.assigned_emp_numbers[1]'],
      ['a scope item status other than pending or complete', { project_code: 'WO-P1', phase_name: 'x', scope_of_work: { checklists: [{ checklist_name: 'A', items: [{ item_name: 'B', status: 'done' }] }] } }, 'data.scope_of_work.checklists[0].items[0].status'],
      ['the REST scope form', { project_code: 'WO-P1', phase_name: 'x', scope_of_work: { checklists: [{ title: 'A', items: [] }] } }, 'data.scope_of_work.checklists[0].checklist_name'],
      ['a time of 7:00', { project_code: 'WO-P1', phase_name: 'x', start_date: '2026-05-01', start_time: '7:00' }, 'data.start_time'],
      ['a custom field that is a number', { project_code: 'WO-P1', phase_name: 'x', custom_fields: { zone: 3 } }, 'data.custom_fields.zone'],
    ])('answers 400 to %s, naming %s, and writes nothing', async (_, data, field) => {
      const before = await countRows(stack, 'work_orders', tenant.companyId);
      const response = await inbound.send('work_order.created', data);
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field } });
      expect(await countRows(stack, 'work_orders', tenant.companyId)).toBe(before);
    });

    it('answers 409 to a work_order_number the company already has', async () => {
      await inbound.send('work_order.created', { project_code: 'WO-P1', phase_name: 'First', work_order_number: 'DUP-7' });
      const response = await inbound.send('work_order.created', { project_code: 'WO-P2', phase_name: 'Second', work_order_number: 'dup-7' });
      expect(response.status).toBe(409);
      expect(response.body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'data.work_order_number' } });
    });
  });

  describe('work_order.updated', () => {
    it('finds the work order by work_order_number, changes only what is given and moves it with project_code', async () => {
      const created = await inbound.send('work_order.created', { project_code: 'WO-P1', phase_name: 'Mover', priority: 'normal', equipment: ['ladder'] });
      const number = (await workOrder(created.body.record_id)).work_order_number;
      const response = await inbound.send('work_order.updated', { work_order_number: number.toLowerCase(), project_code: 'WO-P2', priority: 'high' });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ success: true, message: `Work order ${number.toLowerCase()} updated`, event_id: expect.any(String), record_id: created.body.record_id });
      expect(await workOrder(created.body.record_id)).toMatchObject({ project_id: await projectId('WO-P2'), priority: 'high', equipment: ['ladder'], title: 'Mover' });
      const updated = (await eventsOf(created.body.record_id)).find((e) => e.event_type === 'work_order.updated')!;
      expect(updated.id).toBe(response.body.event_id);
      expect(Object.keys(updated.data.changes).sort()).toEqual(['priority', 'project_id']);
    });

    it('records work_order.status_changed with previous_status and new_status on a status change', async () => {
      const created = await inbound.send('work_order.created', { project_code: 'WO-P1', phase_name: 'Started', start_date: '2026-05-01' });
      const number = (await workOrder(created.body.record_id)).work_order_number;
      expect((await inbound.send('work_order.updated', { work_order_number: number, status: 'in_progress' })).status).toBe(200);
      const changed = (await eventsOf(created.body.record_id)).filter((e) => e.event_type === 'work_order.status_changed');
      expect(changed.map((e) => [e.data.previous_status, e.data.new_status])).toEqual([['scheduled', 'in_progress']]);
    });

    it('answers 409 naming the current status to an illegal transition, and changes nothing', async () => {
      const created = await inbound.send('work_order.created', { project_code: 'WO-P1', phase_name: 'Too soon' });
      const number = (await workOrder(created.body.record_id)).work_order_number;
      const response = await inbound.send('work_order.updated', { work_order_number: number, status: 'complete', priority: 'low' });
      expect(response.status).toBe(409);
      expect(response.body.error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('is open'), details: { field: 'data.status', reason: 'current status open' } });
      expect(await workOrder(created.body.record_id)).toMatchObject({ status: 'open', priority: 'normal' });
    });

    it('answers 404 to a work_order_number no work order has, and 400 without one', async () => {
      const unknown = await inbound.send('work_order.updated', { work_order_number: 'NO-SUCH', priority: 'high' });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error).toMatchObject({ code: 'NOT_FOUND', details: { field: 'data.work_order_number' } });
      const missing = await inbound.send('work_order.updated', { priority: 'high' });
      expect(missing.status).toBe(400);
      expect(missing.body.error).toMatchObject({ details: { field: 'data.work_order_number' } });
    });

    it('answers with unchanged and records no event when nothing changes', async () => {
      const created = await inbound.send('work_order.created', { project_code: 'WO-P1', phase_name: 'Steady', priority: 'high' });
      const number = (await workOrder(created.body.record_id)).work_order_number;
      const before = (await outboxOf(stack, tenant.companyId)).length;
      const response = await inbound.send('work_order.updated', { work_order_number: number, priority: 'high', phase_name: 'Steady' });
      expect(response.status).toBe(200);
      expect(response.body.message).toContain('unchanged');
      expect((await outboxOf(stack, tenant.companyId)).length).toBe(before);
    });
  });

  describe('work_order.deleted', () => {
    it('deletes by work_order_number', async () => {
      const created = await inbound.send('work_order.created', { project_code: 'WO-P1', phase_name: 'Doomed' });
      const number = (await workOrder(created.body.record_id)).work_order_number;
      const response = await inbound.send('work_order.deleted', { work_order_number: number, reason: 'Duplicate' });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ success: true, message: `Work order ${number} deleted`, event_id: expect.any(String), record_id: created.body.record_id });
      expect((await api.get(`/work-orders/${created.body.record_id}`)).status).toBe(404);
      const deleted = (await eventsOf(created.body.record_id)).find((e) => e.event_type === 'work_order.deleted')!;
      expect(deleted.id).toBe(response.body.event_id);
      expect(deleted.catalog_data).toMatchObject({ reason: 'Duplicate' });
    });

    it('deletes by project_code with phase_name, ignoring case', async () => {
      const created = await inbound.send('work_order.created', { project_code: 'WO-P2', phase_name: 'Paint Touch-up' });
      const response = await inbound.send('work_order.deleted', { project_code: 'wo-p2', phase_name: 'PAINT touch-up' });
      expect(response.status).toBe(200);
      expect(response.body.record_id).toBe(created.body.record_id);
      expect((await api.get(`/work-orders/${created.body.record_id}`)).status).toBe(404);
    });

    it('answers 409 when the phase names several work orders of the project, and deletes none', async () => {
      await inbound.send('work_order.created', { project_code: 'WO-P2', phase_name: 'Cleanup' });
      await inbound.send('work_order.created', { project_code: 'WO-P2', phase_name: 'cleanup' });
      const before = await countRows(stack, 'work_orders', tenant.companyId);
      const response = await inbound.send('work_order.deleted', { project_code: 'WO-P2', phase_name: 'Cleanup' });
      expect(response.status).toBe(409);
      expect(response.body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'data.phase_name' } });
      expect(await countRows(stack, 'work_orders', tenant.companyId)).toBe(before);
    });

    it.each([
      ['nothing that identifies it', {}, 400, 'data.work_order_number'],
      ['a project_code without phase_name', { project_code: 'WO-P2' }, 400, 'data.work_order_number'],
      ['both a number and a phase', { work_order_number: 'IN-100', project_code: 'WO-P1', phase_name: 'Level 2 framing' }, 400, 'data.work_order_number'],
      ['an unknown number', { work_order_number: 'NO-SUCH' }, 404, 'data.work_order_number'],
      ['an unknown phase', { project_code: 'WO-P2', phase_name: 'Nothing like it' }, 404, 'data.phase_name'],
    ])('answers %s with %s', async (_, data, status, field) => {
      const before = await countRows(stack, 'work_orders', tenant.companyId);
      const response = await inbound.send('work_order.deleted', data);
      expect(response.status).toBe(status);
      expect(response.body.error).toMatchObject({ details: { field } });
      expect(await countRows(stack, 'work_orders', tenant.companyId)).toBe(before);
    });
  });
});

/** work_order.search and project.search (webhooks.md 2.10, 2.11). */
describe('inbound search', () => {
  let stack: TestStack;
  let inbound: InboundSender;
  let projectIds: Record<string, string>;
  let workOrderIds: Record<string, string>;

  beforeAll(async () => {
    stack = await startStack();
    const tenant = await createTenant(stack.orm, ['admin']);
    inbound = inboundSender(stack, tenant);
    projectIds = {};
    for (const [code, name] of [
      ['HARB-1', 'Harbour Tower'],
      ['HARB-2', 'Harbourfront Plaza'],
      ['MILL-1', 'Mill Street Lofts'],
    ]) {
      projectIds[code] = (await inbound.send('project.created', projectData(code!, { project_name: name, description: `About ${name}`, start_date: '2026-01-05', end_date: null }))).body.record_id;
    }
    workOrderIds = {};
    for (const [number, code, phase] of [
      ['S-1', 'HARB-1', 'Electrical rough-in'],
      ['S-2', 'HARB-1', 'Electrical'],
      ['S-3', 'HARB-2', 'electrical finish'],
      ['S-4', 'MILL-1', 'Plumbing'],
    ]) {
      workOrderIds[number!] = (await inbound.send('work_order.created', { work_order_number: number, project_code: code, phase_name: phase, start_date: '2026-02-02', priority: 'high' })).body.record_id;
    }
    // Another company's matching records are never found.
    const other = inboundSender(stack, await createTenant(stack.orm, ['admin']));
    await other.send('project.created', projectData('HARB-9', { project_name: 'Harbour Elsewhere' }));
  });
  afterAll(() => stack.close());

  const search = async (eventType: string, data: Record<string, unknown>) => {
    const response = await inbound.send(eventType, data);
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['action', 'count', 'results', 'success']);
    expect(response.body).toMatchObject({ success: true, action: 'search', count: response.body.results.length });
    return response.body.results as Record<string, any>[];
  };

  it('project.search answers with the result items of 2.11, exactly', async () => {
    const [result, ...rest] = await search('project.search', { search_term: 'Mill Street Lofts', exact_match: true });
    expect(rest).toEqual([]);
    expect(result).toEqual({ id: projectIds['MILL-1'], project_name: 'Mill Street Lofts', project_code: 'MILL-1', description: 'About Mill Street Lofts', start_date: '2026-01-05', end_date: null });
  });

  it('project.search matches part of the name ignoring case by default, exact matches first', async () => {
    expect((await search('project.search', { search_term: 'harbour' })).map((r) => r.project_code)).toEqual(['HARB-1', 'HARB-2']);
    expect((await search('project.search', { search_term: 'HARBOUR TOWER' })).map((r) => r.project_code)).toEqual(['HARB-1']);
    expect((await search('project.search', { search_term: 'front', exact_match: false })).map((r) => r.project_code)).toEqual(['HARB-2']);
  });

  it('project.search with exact_match compares the whole value, ignoring case', async () => {
    expect((await search('project.search', { search_term: 'harbour tower', exact_match: true })).map((r) => r.project_code)).toEqual(['HARB-1']);
    expect(await search('project.search', { search_term: 'Harbour', exact_match: true })).toEqual([]);
  });

  it('project.search by project_code', async () => {
    expect((await search('project.search', { search_term: 'harb-', search_field: 'project_code' })).map((r) => r.project_code)).toEqual(['HARB-1', 'HARB-2']);
    expect((await search('project.search', { search_term: 'mill-1', search_field: 'project_code', exact_match: true })).map((r) => r.id)).toEqual([projectIds['MILL-1']]);
  });

  it('work_order.search answers with the result items of 2.11, the project included', async () => {
    const [result, ...rest] = await search('work_order.search', { search_term: 'Plumbing' });
    expect(rest).toEqual([]);
    expect(result).toEqual({
      id: workOrderIds['S-4'],
      work_order_number: 'S-4',
      phase_name: 'Plumbing',
      status: 'scheduled',
      priority: 'high',
      start_date: '2026-02-02',
      end_date: null,
      project: { id: projectIds['MILL-1'], project_code: 'MILL-1', project_name: 'Mill Street Lofts' },
    });
  });

  it('work_order.search: partial ignoring case, exact, by number, and within one project', async () => {
    expect((await search('work_order.search', { search_term: 'ELECTRICAL' })).map((r) => r.work_order_number)).toEqual(['S-2', 'S-1', 'S-3']);
    expect((await search('work_order.search', { search_term: 'electrical', exact_match: true })).map((r) => r.work_order_number)).toEqual(['S-2']);
    expect((await search('work_order.search', { search_term: 'electrical', project_code: 'harb-1' })).map((r) => r.work_order_number)).toEqual(['S-2', 'S-1']);
    expect((await search('work_order.search', { search_term: 'electrical', project_code: 'HARB-2' })).map((r) => r.work_order_number)).toEqual(['S-3']);
    expect((await search('work_order.search', { search_term: 's-', search_field: 'work_order_number' })).map((r) => r.work_order_number)).toEqual(['S-1', 'S-2', 'S-3', 'S-4']);
  });

  it('answers no match with an empty results array and count 0', async () => {
    expect(await search('project.search', { search_term: 'Nothing like it' })).toEqual([]);
    expect(await search('work_order.search', { search_term: 'Roofing' })).toEqual([]);
    // A project filter that names no project matches nothing.
    expect(await search('work_order.search', { search_term: 'electrical', project_code: 'NO-SUCH' })).toEqual([]);
  });

  it('takes % and _ as themselves, not as wildcards', async () => {
    expect(await search('project.search', { search_term: 'Harbour%' })).toEqual([]);
    expect(await search('work_order.search', { search_term: 'S_1', search_field: 'work_order_number' })).toEqual([]);
  });

  it.each([
    ['project.search', ''],
    ['project.search', 'x'.repeat(256)],
    ['work_order.search', ''],
    ['work_order.search', 'x'.repeat(256)],
  ])('%s answers 400 to a search_term of %#', async (eventType, term) => {
    const response = await inbound.send(eventType, { search_term: term });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'data.search_term' } });
  });

  it('accepts a search_term of 1 and of 255 characters', async () => {
    expect(await search('project.search', { search_term: 'x'.repeat(255) })).toEqual([]);
    expect((await search('project.search', { search_term: 'M' })).map((r) => r.project_code)).toEqual(['MILL-1']);
  });

  it.each([
    ['project.search', { search_term: 'x', search_field: 'description' }, 'data.search_field'],
    ['work_order.search', { search_term: 'x', exact_match: 'yes' }, 'data.exact_match'],
    ['work_order.search', {}, 'data.search_term'],
  ])('%s answers 400 naming %j', async (eventType, data, field) => {
    const response = await inbound.send(eventType, data);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ details: { field } });
  });
});
