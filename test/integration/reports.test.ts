import { type InboundSender, inboundSender, type RestClient, restClient, unknownId } from '../helpers/api-client';
import { outboxOf, seedEmployee, seedProject } from '../helpers/fixtures';
import { waitFor } from '../helpers/processes';
import { createTenant, issueTestKey, request, startStack, testConfig, type Tenant, type TestStack } from '../helpers/stack';

/**
 * Daily and completion reports (webhooks.md 2.9, 3, 4): REST and inbound submission, approval by the
 * reportApproval workflow through REST and inbound, auto-approval, the deadline's reminders, and refusals.
 */
describe('daily and completion reports with their approval workflow', () => {
  let stack: TestStack;
  let tenant: Tenant;
  let api: RestClient;
  let inbound: InboundSender;
  let projectId: string;
  let manager: string;

  beforeAll(async () => {
    // A deadline of one second: the reminders come while the test waits.
    stack = await startStack({ config: await testConfig({ REPORT_APPROVAL_DEADLINE: '1' }) });
    tenant = await createTenant(stack.orm, ['admin']);
    api = restClient(stack, tenant);
    inbound = inboundSender(stack, tenant);
    projectId = await seedProject(stack, tenant, 'RPT-1');
    manager = await seedEmployee(stack, tenant, { empNumber: 'MGR-1', name: 'Sam Chen', employeeType: 'project_owner' });
  });
  afterAll(() => stack.close());

  let counter = 0;
  /** A work order of the project in `status` (reached through the lifecycle), with a site lead and a crew of one. */
  async function workOrder(status = 'in_progress') {
    counter += 1;
    const crew = await seedEmployee(stack, tenant, { empNumber: `CREW-${counter}` });
    const created = await api.create('work-orders', { title: `Phase ${counter}`, project_id: projectId, work_order_number: `RPT-WO-${counter}`, site_lead_id: manager, assigned_to: [crew] });
    for (const step of { open: [], in_progress: ['in_progress'], complete: ['in_progress', 'complete'], cancelled: ['cancelled'] }[status]!) {
      expect((await api.put(`/work-orders/${created.id}`, { status: step })).status).toBe(200);
    }
    return created as { id: string; work_order_number: string };
  }
  const statusOf = async (id: string) => (await api.get(`/work-orders/${id}`)).body.status;
  const eventsSince = async (count: number) => (await outboxOf(stack, tenant.companyId)).slice(count);
  const eventCount = async () => (await outboxOf(stack, tenant.companyId)).length;
  const searchAttributes = async (workflowId: string) =>
    Object.fromEntries((await stack.temporal.workflow.getHandle(workflowId).describe()).typedSearchAttributes.getAll().map((p) => [p.key.name, p.value]));

  describe('daily reports', () => {
    it('submits over REST: 201 with Location, report.daily_submitted, and a workflow waiting for approval', async () => {
      const wo = await workOrder();
      const before = await eventCount();
      const response = await api.post('/daily-reports', {
        work_order_id: wo.id,
        report_date: '2026-03-03',
        submitted_by_id: manager,
        notes: 'North wall boarded',
        weather_conditions: 'Clear, 4°C',
        hours_worked: 8,
        photos: ['https://files.example.com/north-wall.jpg'],
      });
      expect(response.status).toBe(201);
      const report = response.body;
      expect(response.headers.get('location')).toBe(`/api/v1/daily-reports/${report.id}`);
      expect(report).toMatchObject({
        work_order_id: wo.id,
        report_date: '2026-03-03',
        submitted_by_id: manager,
        crew_count: 2,
        is_auto_approved: false,
        approval_status: 'pending',
        approval_due_at: expect.any(String),
        reminders_sent: 0,
        decided_at: null,
        workflow_id: `report-approval/daily/${report.id}`,
      });
      expect((await api.get(`/daily-reports/${report.id}`)).body).toEqual(report);
      const events = await eventsSince(before);
      expect(events.map((e) => e.event_type)).toEqual(['report.daily_submitted']);
      expect(events[0]!.data).toMatchObject({ report_id: report.id, work_order_number: wo.work_order_number, weather: 'Clear, 4°C', crew_count: 2, submitted_by: { employee_id: manager, name: 'Sam Chen', user_id: null } });
      expect(await searchAttributes(report.workflow_id)).toMatchObject({ CompanyId: tenant.companyId, EventType: 'report.daily_submitted', RecordKey: wo.work_order_number });
    });

    it('approves at once with is_auto_approved (no workflow), and over inbound by work_order_number and emp_number', async () => {
      const wo = await workOrder();
      const rest = await api.post('/daily-reports', { work_order_id: wo.id, report_date: '2026-03-04', is_auto_approved: true, crew_count: 5 });
      expect(rest.body).toMatchObject({ approval_status: 'approved', decided_at: rest.body.created_at, approval_due_at: null, workflow_id: null, crew_count: 5 });
      const response = await inbound.send('report.daily_submitted', { work_order_number: wo.work_order_number.toLowerCase(), report_date: '2026-03-05', submitted_by: 'mgr-1', hours_worked: 7.5 });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ success: true, message: `Daily report of work order ${wo.work_order_number.toLowerCase()} for 2026-03-05 submitted, waiting for approval`, event_id: expect.any(String), record_id: expect.any(String) });
      const report = (await api.get(`/daily-reports/${response.body.record_id}`)).body;
      expect(report).toMatchObject({ submitted_by_id: manager, hours_worked: 7.5, approval_status: 'pending' });
      const [event] = (await outboxOf(stack, tenant.companyId)).filter((e) => e.id === response.body.event_id);
      expect(event).toMatchObject({ event_type: 'report.daily_submitted', origin_api_key_id: response.sentWith.apiKeyId });
    });

    it('approves over REST (200, decided_by_id), then refuses a second decision with 409 naming the status', async () => {
      const wo = await workOrder();
      const report = (await api.post('/daily-reports', { work_order_id: wo.id, report_date: '2026-03-06' })).body;
      const approved = await api.post(`/daily-reports/${report.id}/approve`, { approved_by_id: manager, approval_notes: 'Looks right' });
      expect(approved.status).toBe(200);
      expect(approved.body).toMatchObject({ approval_status: 'approved', decided_by_id: manager, decision_notes: 'Looks right', decided_at: expect.any(String) });
      expect(await stack.temporal.workflow.getHandle(report.workflow_id).result()).toEqual({ outcome: 'approved', eventId: null });
      expect(await searchAttributes(report.workflow_id)).toMatchObject({ ApprovalStatus: 'approved' });
      for (const action of ['approve', 'reject']) {
        const again = await api.post(`/daily-reports/${report.id}/${action}`, {});
        expect(again.status).toBe(409);
        expect(again.body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'approval_status', reason: 'is approved' } });
      }
    });

    it('refuses a second report of the day (409), takes one again after a rejection', async () => {
      const wo = await workOrder();
      const first = (await api.post('/daily-reports', { work_order_id: wo.id, report_date: '2026-03-09' })).body;
      const twice = await inbound.send('report.daily_submitted', { work_order_number: wo.work_order_number, report_date: '2026-03-09' });
      expect(twice.status).toBe(409);
      expect(twice.body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'data.report_date' } });
      const rejected = await api.post(`/daily-reports/${first.id}/reject`, { reason: 'Hours missing' });
      expect(rejected.body).toMatchObject({ approval_status: 'rejected', decision_notes: 'Hours missing', decided_by_id: null });
      expect((await api.post('/daily-reports', { work_order_id: wo.id, report_date: '2026-03-09', hours_worked: 8 })).status).toBe(201);
    });

    it('lists with paging and the filters work_order_id, project_id, date range and approval_status', async () => {
      const wo = await workOrder();
      const ids: string[] = [];
      for (const [day, auto] of [['2026-04-01', true], ['2026-04-02', false], ['2026-04-03', true]] as const) {
        ids.push((await api.post('/daily-reports', { work_order_id: wo.id, report_date: day, is_auto_approved: auto })).body.id);
      }
      const list = async (query: string) => (await api.get(`/daily-reports?${query}`)).body;
      expect((await list(`work_order_id=${wo.id}`)).data.map((r: { id: string }) => r.id)).toEqual(ids);
      expect((await list(`work_order_id=${wo.id}&limit=1&offset=1`))).toMatchObject({ data: [{ id: ids[1] }], pagination: { limit: 1, offset: 1, total: 3 } });
      expect((await list(`work_order_id=${wo.id}&approval_status=approved`)).data.map((r: { id: string }) => r.id)).toEqual([ids[0], ids[2]]);
      expect((await list(`work_order_id=${wo.id}&date_from=2026-04-02&date_to=2026-04-02`)).data.map((r: { id: string }) => r.id)).toEqual([ids[1]]);
      expect((await list(`project_id=${projectId}&date_from=2026-04-01&date_to=2026-04-30`)).pagination.total).toBe(3);
      expect((await list(`project_id=${unknownId()}`)).pagination.total).toBe(0);
      const bad = await api.get('/daily-reports?approval_status=maybe');
      expect(bad.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'approval_status' } });
    });

    it('refuses bad input with 400 naming the field, and writes nothing', async () => {
      const wo = await workOrder();
      const before = await eventCount();
      const cases: [Record<string, unknown>, string][] = [
        [{ report_date: '2026-03-03' }, 'work_order_id'],
        [{ work_order_id: wo.id }, 'report_date'],
        [{ work_order_id: unknownId(), report_date: '2026-03-03' }, 'work_order_id'],
        [{ work_order_id: wo.id, report_date: '2026-02-30' }, 'report_date'],
        [{ work_order_id: wo.id, report_date: '2026-03-03', hours_worked: 24.5 }, 'hours_worked'],
        [{ work_order_id: wo.id, report_date: '2026-03-03', submitted_by_id: unknownId() }, 'submitted_by_id'],
        [{ work_order_id: wo.id, report_date: '2026-03-03', photos: ['not a url'] }, 'photos[0]'],
      ];
      for (const [body, field] of cases) {
        const response = await api.post('/daily-reports', body);
        expect({ field, status: response.status, error: response.body.error?.details.field }).toEqual({ field, status: 400, error: field });
      }
      const inboundCases: [Record<string, unknown>, string][] = [
        [{ report_date: '2026-03-03' }, 'data.work_order_number'],
        [{ work_order_number: wo.work_order_number }, 'data.report_date'],
        [{ work_order_number: 'NO-SUCH-WO', report_date: '2026-03-03' }, 'data.work_order_number'],
        [{ work_order_number: wo.work_order_number, report_date: '2026-03-03', submitted_by: 'NOBODY' }, 'data.submitted_by'],
      ];
      for (const [data, field] of inboundCases) {
        const response = await inbound.send('report.daily_submitted', data);
        expect({ field, status: response.status, error: response.body.error?.details.field }).toEqual({ field, status: 400, error: field });
      }
      expect(await eventCount()).toBe(before);
      expect((await api.get(`/daily-reports?work_order_id=${wo.id}`)).body.pagination.total).toBe(0);
    });
  });

  describe('completion reports', () => {
    it('waits for approval by default; inbound report.completion_approved approves it and completes the work order', async () => {
      const wo = await workOrder('in_progress');
      const before = await eventCount();
      const submitted = await inbound.send('report.completion_submitted', {
        work_order_number: wo.work_order_number,
        submitted_by: 'MGR-1',
        completion_summary: 'All drywall complete',
        scope_checklist: [{ item_name: 'Hang board', status: 'completed' }, { item_name: 'Tape seams', status: 'pending' }],
        completion_checklist: [{ item_name: 'Site cleaned', status: 'completed', notes: 'Swept' }],
      });
      expect(submitted.status).toBe(200);
      expect(submitted.body.message).toBe(`Completion report of work order ${wo.work_order_number} submitted, waiting for approval`);
      const report = (await api.get(`/completion-reports/${submitted.body.record_id}`)).body;
      expect(report).toMatchObject({ report_date: new Date().toISOString().slice(0, 10), requires_approval: true, is_auto_approved: false, approval_status: 'pending' });
      expect(report.scope_checklist).toEqual([{ item_name: 'Hang board', status: 'completed', notes: null }, { item_name: 'Tape seams', status: 'pending', notes: null }]);
      expect(await statusOf(wo.id)).toBe('in_progress');
      await waitFor(async () => (await searchAttributes(report.workflow_id)).ApprovalStatus === 'pending', 10_000, 'ApprovalStatus pending');

      const approved = await inbound.send('report.completion_approved', { work_order_number: wo.work_order_number, approved_by: 'MGR-1', approval_notes: 'Walked it' });
      expect(approved.status).toBe(200);
      expect(approved.body).toEqual({
        success: true,
        message: `Completion report of work order ${wo.work_order_number} approved; the work order is complete`,
        event_id: expect.any(String),
        record_id: report.id,
      });
      expect(await statusOf(wo.id)).toBe('complete');
      expect((await api.get(`/completion-reports/${report.id}`)).body).toMatchObject({ approval_status: 'approved', decided_by_id: manager, decision_notes: 'Walked it' });
      const events = await eventsSince(before);
      expect(events.map((e) => e.event_type)).toEqual(['report.completion_submitted', 'report.completion_approved', 'work_order.status_changed', 'workorder.completed']);
      expect(events[0]!.data.scope_checklist).toEqual({ items: [{ title: 'Hang board', completed: true }, { title: 'Tape seams', completed: false }], completion_percentage: 50 });
      expect(events[1]).toMatchObject({ id: approved.body.event_id, data: { report_id: report.id, approved_by: { employee_id: manager, name: 'Sam Chen', role: null, user_id: null }, approval_notes: 'Walked it' } });
      expect(events[2]!.data).toMatchObject({ previous_status: 'in_progress', new_status: 'complete' });
      expect(await searchAttributes(report.workflow_id)).toMatchObject({ ApprovalStatus: 'approved' });

      const again = await inbound.send('report.completion_approved', { work_order_number: wo.work_order_number });
      expect(again.status).toBe(409);
      expect(again.body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'data.work_order_number' } });
    });

    it('completes the work order at once with requires_approval false and is_auto_approved true; either alone waits', async () => {
      const wo = await workOrder('open');
      const before = await eventCount();
      const response = await api.post('/completion-reports', { work_order_id: wo.id, report_date: '2026-05-01', requires_approval: false, is_auto_approved: true });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({ approval_status: 'approved', workflow_id: null, approval_due_at: null });
      expect(await statusOf(wo.id)).toBe('complete');
      expect((await eventsSince(before)).map((e) => e.event_type)).toEqual(['report.completion_submitted', 'work_order.status_changed', 'workorder.completed']);

      for (const flags of [{ requires_approval: false }, { is_auto_approved: true }]) {
        const other = await workOrder('in_progress');
        const waiting = await inbound.send('report.completion_submitted', { work_order_number: other.work_order_number, ...flags });
        expect((await api.get(`/completion-reports/${waiting.body.record_id}`)).body.approval_status).toBe('pending');
        expect(await statusOf(other.id)).toBe('in_progress');
      }
    });

    it('approves over REST and rejects over REST: a rejection leaves the work order, and a new report may follow', async () => {
      const wo = await workOrder();
      const first = (await api.post('/completion-reports', { work_order_id: wo.id })).body;
      const second = await api.post('/completion-reports', { work_order_id: wo.id });
      expect(second.status).toBe(409);
      expect(second.body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'work_order_id', reason: 'a completion report is waiting for approval' } });
      const rejected = await api.post(`/completion-reports/${first.id}/reject`, { rejected_by_id: manager, reason: 'Punch list open' });
      expect(rejected.status).toBe(200);
      expect(rejected.body).toMatchObject({ approval_status: 'rejected', decided_by_id: manager });
      expect(await statusOf(wo.id)).toBe('in_progress');
      expect(await stack.temporal.workflow.getHandle(first.workflow_id).result()).toEqual({ outcome: 'rejected', eventId: null });

      const next = (await api.post('/completion-reports', { work_order_id: wo.id })).body;
      const approved = await api.post(`/completion-reports/${next.id}/approve`, {});
      expect(approved.status).toBe(200);
      expect(approved.body).toMatchObject({ approval_status: 'approved', decided_by_id: null });
      expect(await statusOf(wo.id)).toBe('complete');
      expect((await api.post('/completion-reports', { work_order_id: wo.id })).body.error).toMatchObject({ code: 'CONFLICT', details: { reason: 'work order is complete' } });
    });

    it('reminds at the deadline, shows the approval as overdue, and keeps waiting for it', async () => {
      const wo = await workOrder();
      const sentAt = Date.now();
      const report = (await api.post('/completion-reports', { work_order_id: wo.id })).body;
      const tookMs = Date.now() - sentAt;
      // The deadline (1 s) runs from the submission's start; the record is made later in the same request, by as much
      // as a loaded machine makes the request take.
      const dueAfterCreatedMs = Date.parse(report.approval_due_at) - Date.parse(report.created_at);
      expect(dueAfterCreatedMs).toBeLessThanOrEqual(1000);
      expect(dueAfterCreatedMs).toBeGreaterThanOrEqual(1000 - tookMs);
      await waitFor(async () => (await api.get(`/completion-reports/${report.id}`)).body.reminders_sent >= 2, 20_000, 'two reminders');
      expect(await searchAttributes(report.workflow_id)).toMatchObject({ ApprovalStatus: 'overdue' });
      const approved = await api.post(`/completion-reports/${report.id}/approve`, { approved_by_id: manager });
      expect(approved.body.approval_status).toBe('approved');
      expect(await statusOf(wo.id)).toBe('complete');
    });

    it('lists pending approvals by the ApprovalStatus search attribute', async () => {
      const wo = await workOrder();
      const report = (await api.post('/completion-reports', { work_order_id: wo.id, report_date: '2026-06-01' })).body;
      const query = `CompanyId = "${tenant.companyId}" AND ApprovalStatus IN ("pending", "overdue") AND RecordKey = "${wo.work_order_number}"`;
      const found = await waitFor(async () => {
        const ids: string[] = [];
        for await (const workflow of stack.temporal.workflow.list({ query })) ids.push(workflow.workflowId);
        return ids.length ? ids : null;
      }, 20_000, 'the visibility store to list the workflow');
      expect(found).toEqual([report.workflow_id]);
    });

    it('refuses: a closed or cancelled work order (409), an unknown one on approval (404), and decisions without reports:approve (403)', async () => {
      const cancelled = await workOrder('cancelled');
      const refused = await inbound.send('report.completion_submitted', { work_order_number: cancelled.work_order_number });
      expect(refused.status).toBe(409);
      expect(refused.body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'data.work_order_id', reason: 'work order is cancelled' } });
      const unknown = await inbound.send('report.completion_approved', { work_order_number: 'NO-SUCH-WO' });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error).toMatchObject({ code: 'NOT_FOUND', details: { field: 'data.work_order_number' } });
      const wo = await workOrder();
      const report = (await api.post('/completion-reports', { work_order_id: wo.id })).body;
      const writer = await issueTestKey(stack.orm, tenant.companyId, ['completion-reports:write', 'completion-reports:read']);
      const forbidden = await request(stack.baseUrl, 'POST', `/api/v1/completion-reports/${report.id}/approve`, { key: writer.key, body: {} });
      expect(forbidden.status).toBe(403);
      const badApprover = await api.post(`/completion-reports/${report.id}/approve`, { approved_by_id: unknownId() });
      expect(badApprover.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'approved_by_id' } });
      expect((await api.post(`/completion-reports/${unknownId()}/approve`, {})).status).toBe(404);
      const badInbound = await inbound.send('report.completion_submitted', { work_order_number: wo.work_order_number, scope_checklist: [{ item_name: 'x' }] });
      expect(badInbound.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'data.scope_checklist[0].status' } });
      expect((await api.get(`/completion-reports/${report.id}`)).body.approval_status).toBe('pending');
    });
  });
});
