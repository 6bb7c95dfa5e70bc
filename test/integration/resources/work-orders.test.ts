import { restClient, unknownId } from '../../helpers/api-client';
import { seedEmployee, seedProject } from '../../helpers/fixtures';
import { createTenant, startStack, type TestStack } from '../../helpers/stack';
import { crudSuite, type CrudFixture } from './crud-suite';

const workOrdersFixture: CrudFixture = {
  collection: 'work-orders',
  table: 'work_orders',
  keyFields: ['work_order_number'],
  async parents({ stack, tenant }) {
    return {
      first: await seedProject(stack, tenant),
      second: await seedProject(stack, tenant),
      lead: await seedEmployee(stack, tenant, { employeeType: 'site_lead', name: 'Lee Lead' }),
      ana: await seedEmployee(stack, tenant, { name: 'Ana Crew' }),
      ben: await seedEmployee(stack, tenant, { name: 'Ben Crew' }),
    };
  },
  body: (parents, tag) => ({
    work_order_number: `WO-T-${tag}`,
    title: `Drywall ${tag}`,
    project_id: parents.first,
    status: 'scheduled',
    priority: 'high',
    start_date: '2026-05-04',
    end_date: '2026-05-06',
    start_time: '07:00',
    end_time: '15:30',
    expected_start_date: '2026-05-01',
    expected_end_date: '2026-05-08',
    expected_start_time: '08:00',
    expected_end_time: '16:00',
    people_required: 4,
    people_skill_requirements: { Drywall: 3, Taping: 1 },
    days_hours_required: '3 days, 8 h each',
    performed_by: 'internal',
    site_lead_id: parents.lead,
    // Kept in the order given, not sorted.
    assigned_to: [parents.ben, parents.ana],
    scope_of_work: { checklists: [{ title: 'Prep', items: [{ text: 'Protect floors', completed: false }] }] },
    equipment: ['scissor lift'],
    specialty_materials: ['type X board'],
    scheduler_notes: { subtrade_required: 'Electrician first', scheduling_insights: 'Mornings only' },
    custom_fields: { zone: 'B' },
    display_order: 3,
    require_daily_report: true,
    require_completion_report: true,
    travel_time_hours: 1.5,
    additional_labor_cost: 250.5,
  }),
  listRecords: (parents) => [
    { work_order_number: 'LIST-A', title: 'Footings', project_id: parents.first, start_date: '2026-05-01', end_date: '2026-05-03', site_lead_id: parents.lead, assigned_to: [parents.ana] },
    { work_order_number: 'LIST-B', title: 'Survey', project_id: parents.first, assigned_to: [parents.ben] },
    { work_order_number: 'LIST-C', title: 'Framing', project_id: parents.second, status: 'in_progress', start_date: '2026-05-10', assigned_to: [parents.ana, parents.ben] },
    { work_order_number: 'LIST-D', title: 'Roofing', project_id: parents.second, status: 'on_hold', start_date: '2026-04-20', end_date: '2026-04-22' },
  ],
  filters: [
    { query: (p) => `project_id=${p.first}`, expect: [0, 1] },
    { query: (p) => `project_id=${p.second}`, expect: [2, 3] },
    { query: () => `project_id=${unknownId()}`, expect: [] },
    { query: () => 'status=open', expect: [1] },
    { query: () => 'status=scheduled', expect: [0] },
    { query: () => 'status=in_progress', expect: [2] },
    // As site lead or in the crew.
    { query: (p) => `assigned_to=${p.lead}`, expect: [0] },
    { query: (p) => `assigned_to=${p.ana}`, expect: [0, 2] },
    { query: (p) => `assigned_to=${p.ben}`, expect: [1, 2] },
    { query: () => 'work_order_number=list-c', expect: [2] },
    // Ranges keep the work orders that overlap them; one without an end runs on its start date.
    { query: () => 'scheduled_from=2026-05-02', expect: [0, 2] },
    { query: () => 'scheduled_to=2026-04-30', expect: [3] },
    { query: () => 'scheduled_from=2026-05-04&scheduled_to=2026-05-31', expect: [2] },
    { query: () => 'scheduled_from=2026-04-22&scheduled_to=2026-05-01', expect: [0, 3] },
    { query: (p) => `project_id=${p.first}&assigned_to=${p.ana}&status=scheduled`, expect: [0] },
  ],
  update: { patch: { priority: 'urgent', people_required: 6, equipment: ['scissor lift', 'scaffold'], display_order: 1 }, clear: 'days_hours_required' },
  textField: 'title',
  invalid: [
    { what: 'no title', on: 'create', body: (p) => ({ project_id: p.first }), field: 'title' },
    { what: 'no project_id', on: 'create', body: () => ({ title: 'Loose' }), field: 'project_id' },
    { what: 'a project of no one', on: 'create', body: () => ({ title: 'Lost', project_id: unknownId() }), field: 'project_id' },
    { what: 'a project of no one', on: 'update', body: () => ({ project_id: unknownId() }), field: 'project_id' },
    { what: 'an unknown assignee', on: 'create', body: (p) => ({ title: 'Crew', project_id: p.first, assigned_to: [p.ana, unknownId()] }), field: 'assigned_to' },
    { what: 'the same assignee twice', on: 'update', body: (p) => ({ assigned_to: [p.ana, p.ana] }), field: 'assigned_to' },
    { what: 'an unknown site lead', on: 'update', body: () => ({ site_lead_id: unknownId() }), field: 'site_lead_id' },
    { what: 'an unknown status', on: 'update', body: () => ({ status: 'done' }), field: 'status' },
    { what: 'an unknown priority', on: 'create', body: (p) => ({ title: 'Rush', project_id: p.first, priority: 'asap' }), field: 'priority' },
    { what: 'a new work order that is already closed', on: 'create', body: (p) => ({ title: 'Done', project_id: p.first, status: 'closed' }), field: 'status' },
    { what: 'an end date before the start date', on: 'update', body: () => ({ end_date: '2026-05-01' }), field: 'end_date' },
    { what: 'an end time before the start time on the same day', on: 'create', body: (p) => ({ title: 'Back', project_id: p.first, start_date: '2026-05-04', start_time: '10:00', end_date: '2026-05-04', end_time: '09:59' }), field: 'end_date' },
    { what: 'a start time without a start date', on: 'create', body: (p) => ({ title: 'When', project_id: p.first, start_time: '08:00' }), field: 'start_time' },
    { what: 'a time of 24:00', on: 'update', body: () => ({ start_time: '24:00' }), field: 'start_time' },
    { what: 'a time with seconds', on: 'update', body: () => ({ end_time: '15:30:00' }), field: 'end_time' },
    { what: 'scheduled_start with start_date', on: 'create', body: (p) => ({ title: 'Both', project_id: p.first, scheduled_start: '2026-05-04T07:00:00Z', start_date: '2026-05-04' }), field: 'scheduled_start' },
    { what: 'scheduled_end before scheduled_start', on: 'create', body: (p) => ({ title: 'Back', project_id: p.first, scheduled_start: '2026-05-04T10:00:00Z', scheduled_end: '2026-05-04T09:00:00Z' }), field: 'scheduled_end' },
    { what: 'scheduled_start off the whole minute', on: 'update', body: () => ({ scheduled_start: '2026-05-04T07:00:30Z' }), field: 'scheduled_start' },
    { what: 'a negative skill count', on: 'update', body: () => ({ people_skill_requirements: { Drywall: -1 } }), field: 'people_skill_requirements.Drywall' },
    { what: 'a checklist item without completed', on: 'update', body: () => ({ scope_of_work: { checklists: [{ title: 'Prep', items: [{ text: 'Tape' }] }] } }), field: 'scope_of_work.checklists[0].items[0].completed' },
    { what: 'scheduler notes with an unknown member', on: 'update', body: () => ({ scheduler_notes: { mood: 'calm' } }), field: 'scheduler_notes.mood' },
    { what: 'a negative labour cost', on: 'update', body: () => ({ additional_labor_cost: -1 }), field: 'additional_labor_cost' },
    { what: 'a work order number with a space', on: 'create', body: (p) => ({ title: 'Spaced', project_id: p.first, work_order_number: 'WO 1' }), field: 'work_order_number' },
  ],
};

describe('REST /work-orders', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ worker: false });
  });
  afterAll(() => stack.close());

  crudSuite(workOrdersFixture, () => stack);

  describe('numbers and schedule fields', () => {
    it('numbers work orders WO-000001, WO-000002, … per company, skipping numbers a sender chose', async () => {
      const tenant = await createTenant(stack.orm);
      const api = restClient(stack, tenant);
      const project = await seedProject(stack, tenant);
      await api.create('work-orders', { title: 'Chosen', project_id: project, work_order_number: 'WO-000002' });
      const numbers: string[] = [];
      for (const title of ['A', 'B', 'C']) numbers.push((await api.create('work-orders', { title, project_id: project })).work_order_number);
      expect(numbers).toEqual(['WO-000001', 'WO-000003', 'WO-000004']);
      const otherTenant = await createTenant(stack.orm);
      const other = await restClient(stack, otherTenant).create('work-orders', { title: 'First', project_id: await seedProject(stack, otherTenant) });
      expect(other.work_order_number).toBe('WO-000001');
    });

    it('takes scheduled_start and scheduled_end as UTC instants and shows them as dates and times', async () => {
      const tenant = await createTenant(stack.orm);
      const api = restClient(stack, tenant);
      const created = await api.create('work-orders', {
        title: 'Pour',
        project_id: await seedProject(stack, tenant),
        scheduled_start: '2026-03-02T01:00:00-07:00',
        scheduled_end: '2026-03-02T16:30:00Z',
      });
      expect(created).toMatchObject({
        status: 'scheduled',
        scheduled_start: '2026-03-02T08:00:00.000Z',
        scheduled_end: '2026-03-02T16:30:00.000Z',
        start_date: '2026-03-02',
        start_time: '08:00',
        end_date: '2026-03-02',
        end_time: '16:30',
      });
      const allDay = await api.put(`/work-orders/${created.id}`, { start_time: null, end_time: null });
      expect(allDay.body).toMatchObject({ scheduled_start: '2026-03-02T00:00:00.000Z', scheduled_end: '2026-03-02T00:00:00.000Z', start_time: null, end_time: null });
      const cleared = await api.put(`/work-orders/${created.id}`, { scheduled_start: null, scheduled_end: null });
      expect(cleared.body).toMatchObject({ scheduled_start: null, scheduled_end: null, start_date: null, end_date: null });
    });

    it('creates a work order without dates open, and one with a start date scheduled', async () => {
      const tenant = await createTenant(stack.orm);
      const api = restClient(stack, tenant);
      const project = await seedProject(stack, tenant);
      expect((await api.create('work-orders', { title: 'Later', project_id: project })).status).toBe('open');
      expect((await api.create('work-orders', { title: 'Soon', project_id: project, start_date: '2026-06-01' })).status).toBe('scheduled');
      expect((await api.create('work-orders', { title: 'Held', project_id: project, start_date: '2026-06-01', status: 'on_hold' })).status).toBe('on_hold');
    });

    it('keeps assigned_to in the order given, on create and on update', async () => {
      const tenant = await createTenant(stack.orm);
      const api = restClient(stack, tenant);
      const crew = [];
      for (const name of ['Cai', 'Ada', 'Bo']) crew.push(await seedEmployee(stack, tenant, { name }));
      const order = [crew[0]!, crew[1]!, crew[2]!].sort().reverse();
      const created = await api.create('work-orders', { title: 'Ordered', project_id: await seedProject(stack, tenant), assigned_to: order });
      expect(created.assigned_to).toEqual(order);
      const reordered = [order[1]!, order[2]!, order[0]!];
      expect((await api.put(`/work-orders/${created.id}`, { assigned_to: reordered })).body.assigned_to).toEqual(reordered);
      expect((await api.get(`/work-orders/${created.id}`)).body.assigned_to).toEqual(reordered);
      expect((await api.get('/work-orders')).body.data[0].assigned_to).toEqual(reordered);
    });

    it('moves a work order to another project of the company', async () => {
      const tenant = await createTenant(stack.orm);
      const api = restClient(stack, tenant);
      const [from, to] = [await seedProject(stack, tenant), await seedProject(stack, tenant)];
      const created = await api.create('work-orders', { title: 'Mover', project_id: from });
      const moved = await api.put(`/work-orders/${created.id}`, { project_id: to });
      expect(moved.status).toBe(200);
      expect(moved.body.project_id).toBe(to);
      expect((await api.get(`/work-orders?project_id=${to}`)).body.data.map((w: { id: string }) => w.id)).toEqual([created.id]);
    });
  });
});
