import { actorOf, outboxOf, seedEmployee, seedProject } from '../helpers/fixtures';
import { createTenant, request, startStack, type Tenant, type TestStack } from '../helpers/stack';

describe('REST resources', () => {
  let stack: TestStack;
  let tenant: Tenant;

  beforeAll(async () => {
    stack = await startStack({ worker: false });
    tenant = await createTenant(stack.orm, ['admin']);
  });
  afterAll(() => stack.close());

  describe('GET /projects', () => {
    let ids: string[];
    let pager: Tenant;

    beforeAll(async () => {
      pager = await createTenant(stack.orm, ['projects:read']);
      ids = [];
      for (let i = 0; i < 5; i++) ids.push(await seedProject(stack, pager, `LIST-${i}`));
    });

    it('lists with the spec fields and a pagination object', async () => {
      const response = await request(stack.baseUrl, 'GET', '/api/v1/projects', { key: pager.key });
      expect(response.status).toBe(200);
      expect(response.body.pagination).toEqual({ limit: 50, offset: 0, total: 5, next_cursor: null });
      expect(response.body.data.map((p: { id: string }) => p.id)).toEqual(ids);
      expect(response.body.data[0]).toEqual(
        expect.objectContaining({
          id: ids[0],
          name: 'Project LIST-0',
          status: 'active',
          customer_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          start_date: null,
          created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
          project_code: 'LIST-0',
        }),
      );
    });

    it('pages with limit and offset', async () => {
      const page = await request(stack.baseUrl, 'GET', '/api/v1/projects?limit=2&offset=3', { key: pager.key });
      expect(page.body.pagination).toEqual({ limit: 2, offset: 3, total: 5, next_cursor: null });
      expect(page.body.data.map((p: { id: string }) => p.id)).toEqual(ids.slice(3, 5));
      const past = await request(stack.baseUrl, 'GET', '/api/v1/projects?offset=10', { key: pager.key });
      expect(past.body).toEqual({ data: [], pagination: { limit: 50, offset: 10, total: 5, next_cursor: null } });
    });

    it.each(['limit=0', 'limit=101', 'limit=abc', 'offset=-1'])('answers 400 to %s', async (query) => {
      const response = await request(stack.baseUrl, 'GET', `/api/v1/projects?${query}`, { key: pager.key });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: query.split('=')[0] } });
    });
  });

  describe('work orders', () => {
    let projectId: string;
    let leadId: string;
    let workerId: string;

    beforeAll(async () => {
      projectId = await seedProject(stack, tenant);
      leadId = await seedEmployee(stack, tenant, { employeeType: 'site_lead', name: 'Lee Lead' });
      workerId = await seedEmployee(stack, tenant);
    });

    it('creates one (201) and reads it back (200)', async () => {
      const body = {
        title: 'Pour foundation',
        project_id: projectId,
        assigned_to: [leadId, workerId],
        scheduled_start: '2026-03-02T08:00:00Z',
        scheduled_end: '2026-03-02T16:30:00Z',
        priority: 'high',
      };
      const created = await request(stack.baseUrl, 'POST', '/api/v1/work-orders', { key: tenant.key, body });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.any(String),
        work_order_number: expect.stringMatching(/^WO-\d{6}$/),
        title: 'Pour foundation',
        project_id: projectId,
        status: 'scheduled',
        priority: 'high',
        scheduled_start: '2026-03-02T08:00:00.000Z',
        scheduled_end: '2026-03-02T16:30:00.000Z',
        start_date: '2026-03-02',
        end_date: '2026-03-02',
        start_time: '08:00',
        end_time: '16:30',
        expected_start_date: null,
        expected_end_date: null,
        expected_start_time: null,
        expected_end_time: null,
        people_required: null,
        people_skill_requirements: {},
        days_hours_required: null,
        performed_by: null,
        site_lead_id: null,
        assigned_to: [leadId, workerId],
        scope_of_work: { checklists: [] },
        equipment: [],
        specialty_materials: [],
        scheduler_notes: { subtrade_required: null, scheduling_insights: null },
        custom_fields: {},
        display_order: null,
        require_daily_report: false,
        require_completion_report: false,
        travel_time_hours: null,
        additional_labor_cost: 0,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      expect(created.headers.get('location')).toBe(`/api/v1/work-orders/${created.body.id}`);

      const read = await request(stack.baseUrl, 'GET', `/api/v1/work-orders/${created.body.id}`, { key: tenant.key });
      expect(read.status).toBe(200);
      expect(read.body).toEqual(created.body);
    });

    it('numbers work orders per company without gaps', async () => {
      const other = await createTenant(stack.orm, ['admin']);
      const otherProject = await seedProject(stack, other);
      const numbers: string[] = [];
      for (const title of ['A', 'B', 'C']) {
        numbers.push((await request(stack.baseUrl, 'POST', '/api/v1/work-orders', { key: other.key, body: { title, project_id: otherProject } })).body.work_order_number);
      }
      expect(numbers).toEqual(['WO-000001', 'WO-000002', 'WO-000003']);
    });

    it('records work_order.created in the outbox with the key that made it', async () => {
      const created = await request(stack.baseUrl, 'POST', '/api/v1/work-orders', {
        key: tenant.key,
        body: { title: 'Frame walls', project_id: projectId, site_lead_id: leadId, assigned_to: [leadId], scheduled_start: '2026-03-03T07:30:00Z' },
      });
      const event = (await outboxOf(stack, tenant.companyId)).find((e) => e.event_type === 'work_order.created' && e.data.id === created.body.id);
      expect(event).toBeDefined();
      expect(event!.origin_api_key_id).toBe(tenant.apiKeyId);
      expect(event!.data).toMatchObject({
        work_order_number: created.body.work_order_number,
        phase_name: 'Frame walls',
        status: 'scheduled',
        priority: 'normal',
        start_date: '2026-03-03',
        start_time: '07:30',
        project: { id: projectId, customer_name: 'Seed Customer', site_address: 'Calgary' },
        site_lead: { id: leadId, name: 'Lee Lead' },
        created_by: tenant.apiKeyId,
      });
      expect(event!.catalog_data).toEqual({
        id: created.body.id,
        workOrderNumber: created.body.work_order_number,
        title: 'Frame walls',
        status: 'scheduled',
        priority: 'normal',
        projectId,
      });
    });

    it.each([
      ['no title', { project_id: 'P' }, 'title'],
      ['an unknown priority', { title: 'x', priority: 'asap' }, 'priority'],
      ['an end before its start', { title: 'x', scheduled_start: '2026-03-02T10:00:00Z', scheduled_end: '2026-03-02T09:00:00Z' }, 'scheduled_end'],
      ['a project of no one', { title: 'x', project_id: '0193f4a0-0000-7000-8000-000000000001' }, 'project_id'],
      ['unknown assignees', { title: 'x', assigned_to: ['0193f4a0-0000-7000-8000-000000000002'] }, 'assigned_to'],
    ])('answers 400 to %s and writes nothing', async (_, partial, field) => {
      const before = (await outboxOf(stack, tenant.companyId)).length;
      const body = { project_id: projectId, ...partial };
      const response = await request(stack.baseUrl, 'POST', '/api/v1/work-orders', { key: tenant.key, body });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field } });
      expect((await outboxOf(stack, tenant.companyId)).length).toBe(before);
    });
  });

  describe('skill library', () => {
    it('adds, lists, refuses duplicates case-insensitively and removes', async () => {
      const owner = await createTenant(stack.orm, ['skills:read', 'skills:write']);
      const welding = await request(stack.baseUrl, 'POST', '/api/v1/skills', { key: owner.key, body: { name: ' Welding ' } });
      expect(welding.status).toBe(201);
      expect(welding.body).toMatchObject({ name: 'Welding' });
      await request(stack.baseUrl, 'POST', '/api/v1/skills', { key: owner.key, body: { name: 'Carpentry' } });

      const duplicate = await request(stack.baseUrl, 'POST', '/api/v1/skills', { key: owner.key, body: { name: 'WELDING' } });
      expect(duplicate.status).toBe(409);
      expect(duplicate.body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'name' } });

      const list = await request(stack.baseUrl, 'GET', '/api/v1/skills', { key: owner.key });
      expect(list.body.data.map((s: { name: string }) => s.name)).toEqual(['Carpentry', 'Welding']);
      expect(list.body.pagination.total).toBe(2);

      expect((await request(stack.baseUrl, 'DELETE', `/api/v1/skills/${welding.body.id}`, { key: owner.key })).status).toBe(204);
      expect((await request(stack.baseUrl, 'DELETE', `/api/v1/skills/${welding.body.id}`, { key: owner.key })).status).toBe(404);

      const stranger = await createTenant(stack.orm, ['admin']);
      const carpentry = list.body.data.find((s: { name: string }) => s.name === 'Carpentry');
      expect((await request(stack.baseUrl, 'DELETE', `/api/v1/skills/${carpentry.id}`, { key: stranger.key })).status).toBe(404);
    });
  });

  it('records the originating key on every event', async () => {
    const events = await outboxOf(stack, tenant.companyId);
    expect(events.length).toBeGreaterThan(0);
    expect(events.every((e) => e.origin_api_key_id === actorOf(tenant).apiKeyId)).toBe(true);
  });
});
