import { restClient } from '../helpers/api-client';
import { outboxOf, seedEmployee } from '../helpers/fixtures';
import { createTenant, startStack, type TestStack } from '../helpers/stack';

/** POST /payroll-runs runs the payrollRun workflow on the stack's worker (webhooks.md 3: payroll batch processing). */
describe('payroll runs', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.close());

  /** A company whose employee has timesheets of the given days in the given statuses. */
  async function company(sheets: [string, string][]) {
    const tenant = await createTenant(stack.orm);
    const api = restClient(stack, tenant);
    const employee = await seedEmployee(stack, tenant, { name: 'Pay Roll' });
    const ids: Record<string, string> = {};
    for (const [day, status] of sheets) ids[day] = (await api.create('timesheets', { employee_id: employee, timesheet_date: day, status, total_hours: 8 })).id;
    return { tenant, api, ids, employee };
  }

  it('processes every locked timesheet of the period, each with timesheet.processed, then one batch; nothing else changes', async () => {
    const { tenant, api, ids } = await company([
      ['2026-02-28', 'locked'],
      ['2026-03-02', 'locked'],
      ['2026-03-03', 'submitted'],
      ['2026-03-04', 'draft'],
      ['2026-03-05', 'locked'],
      ['2026-03-09', 'locked'],
    ]);
    const other = await company([['2026-03-02', 'locked']]);
    const before = (await outboxOf(stack, tenant.companyId)).length;

    const response = await api.post('/payroll-runs', { period_start: '2026-03-01', period_end: '2026-03-07' });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: expect.any(String),
      period_start: '2026-03-01',
      period_end: '2026-03-07',
      status: 'completed',
      total_count: 2,
      timesheet_ids: [ids['2026-03-02'], ids['2026-03-05']],
      requested_by: tenant.apiKeyId,
      workflow_id: `payroll/${tenant.companyId}/2026-03-01/2026-03-07`,
      created_at: expect.any(String),
      completed_at: expect.any(String),
    });
    expect(response.headers.get('location')).toBe(`/api/v1/payroll-runs/${response.body.id}`);
    expect((await api.get(`/payroll-runs/${response.body.id}`)).body).toEqual(response.body);

    const statuses = Object.fromEntries(await Promise.all(Object.entries(ids).map(async ([day, id]) => [day, (await api.get(`/timesheets/${id}`)).body.status])));
    expect(statuses).toEqual({ '2026-02-28': 'locked', '2026-03-02': 'processed', '2026-03-03': 'submitted', '2026-03-04': 'draft', '2026-03-05': 'processed', '2026-03-09': 'locked' });
    expect((await api.get(`/timesheets/${ids['2026-03-02']}`)).body.payroll_run_id).toBe(response.body.id);
    expect((await other.api.get(`/timesheets/${other.ids['2026-03-02']}`)).body.status).toBe('locked');

    const events = (await outboxOf(stack, tenant.companyId)).slice(before);
    expect(events.map((e) => [e.event_type, e.data.timesheet_id ?? e.data.total_count])).toEqual([
      ['timesheet.processed', ids['2026-03-02']],
      ['timesheet.processed', ids['2026-03-05']],
      ['timesheets.processed.batch', 2],
    ]);
    expect(events.every((e) => e.origin_api_key_id === tenant.apiKeyId)).toBe(true);
  });

  it('starts a new run for a period already run: it processes what was locked since, and an empty run records no batch', async () => {
    const { tenant, api, ids } = await company([['2026-04-01', 'locked']]);
    const first = (await api.post('/payroll-runs', { period_start: '2026-04-01', period_end: '2026-04-30' })).body;
    const late = await api.create('timesheets', { employee_id: (await api.get(`/timesheets/${ids['2026-04-01']}`)).body.employee_id, timesheet_date: '2026-04-15', status: 'locked' });
    const second = (await api.post('/payroll-runs', { period_start: '2026-04-01', period_end: '2026-04-30' })).body;
    const before = (await outboxOf(stack, tenant.companyId)).length;
    const third = (await api.post('/payroll-runs', { period_start: '2026-04-01', period_end: '2026-04-30' })).body;
    expect([first.total_count, second.total_count, third.total_count]).toEqual([1, 1, 0]);
    expect(second.timesheet_ids).toEqual([late.id]);
    expect(new Set([first.id, second.id, third.id]).size).toBe(3);
    expect((await outboxOf(stack, tenant.companyId)).slice(before)).toEqual([]);
    const listed = (await api.get('/payroll-runs')).body;
    expect(listed.data.map((r: any) => r.id)).toEqual([third.id, second.id, first.id]);
    expect(listed.pagination).toEqual({ limit: 50, offset: 0, total: 3, next_cursor: null });
  });

  it.each([
    [{ period_start: '2026-03-07', period_end: '2026-03-01' }, 'period_end'],
    [{ period_start: '2026-02-30', period_end: '2026-03-01' }, 'period_start'],
    [{ period_start: '2026-03-01' }, 'period_end'],
  ])('answers 400 to %j naming %s', async (body, field) => {
    const { api } = await company([]);
    const response = await api.post('/payroll-runs', body);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field } });
    expect((await api.get('/payroll-runs')).body.data).toEqual([]);
  });

  it('needs timesheets:process to run payroll, and timesheets:read to see runs', async () => {
    const { tenant } = await company([]);
    const reader = restClient(stack, tenant, { scopes: ['timesheets:read', 'timesheets:write', 'timesheets:approve'] });
    const refused = await reader.post('/payroll-runs', { period_start: '2026-03-01', period_end: '2026-03-07' });
    expect(refused.status).toBe(403);
    expect(refused.body.error.details.reason).toBe('missing scope timesheets:process');
    const payroll = restClient(stack, tenant, { scopes: ['timesheets:process'] });
    const run = await payroll.post('/payroll-runs', { period_start: '2026-03-01', period_end: '2026-03-07' });
    expect(run.status).toBe(200);
    expect((await payroll.get(`/payroll-runs/${run.body.id}`)).status).toBe(403);
    expect((await reader.get(`/payroll-runs/${run.body.id}`)).status).toBe(200);
    expect((await reader.get('/payroll-runs/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });
});
