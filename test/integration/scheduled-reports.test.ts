import { ScheduleNotFoundError } from '@temporalio/client';
import { temporalScheduleId } from '../../src/domain/reporting/report-schedules';
import { type RestClient, restClient, unknownId } from '../helpers/api-client';
import { eventDataProblems, SHAPE_A_ENVELOPE, SHAPE_B_ENVELOPE } from '../helpers/event-contract';
import { type EventDeliveries, startEventDeliveries } from '../helpers/event-deliveries';
import { seedEmployee, seedProject } from '../helpers/fixtures';
import { waitFor } from '../helpers/processes';
import { request, type Tenant, type TestStack } from '../helpers/stack';
import { addApiKey, verifiedAsReceiver } from '../helpers/webhooks';

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

/**
 * Scheduled reports: each schedule a Temporal Schedule; a run stores the report (JSON, CSV) with
 * report.generated, or report.failed with the reason; pause, unpause, run now and delete over REST and as the
 * Temporal UI does them; every report.* event on real HTTPS deliveries in both shapes.
 */
describe('scheduled reports (Temporal Schedules)', () => {
  let events: EventDeliveries;
  let stack: TestStack;
  let owner: Tenant; // owns the endpoints and makes no changes, so echo prevention keeps nothing back
  let api: RestClient;
  let projectId: string;
  let workOrder: { id: string; work_order_number: string };

  beforeAll(async () => {
    events = await startEventDeliveries();
    ({ stack, owner } = events);
    // Keys of the company taking turns: this file makes more requests than one key may in a minute.
    api = restClient(stack, events.restKey);
    projectId = await seedProject(stack, owner, 'SR-1');
    workOrder = await api.create('work-orders', { title: 'Framing', project_id: projectId, status: 'in_progress' });
    await api.create('work-orders', { title: 'Drywall', project_id: projectId });
    const worker = await seedEmployee(stack, owner, { name: 'Jo Builder' });
    await api.create('timesheets', {
      employee_id: worker,
      timesheet_date: day(-2),
      entries: [
        { entry_date: day(-2), hours: 6.5, work_type_code: 'REG', work_order_number: workOrder.work_order_number },
        { entry_date: day(-2), hours: 1.5, work_type_code: 'VAC' },
      ],
    });
  });
  afterAll(() => events?.close());

  const schedule = (body: Record<string, unknown>) => api.create('report-schedules', { name: 'Weekly labour hours', report_type: 'labor_hours_by_project', cron: '0 6 * * 1', ...body });
  const handleOf = (id: string) => stack.temporal.schedule.getHandle(temporalScheduleId(id));
  /** Runs the schedule now and waits for the run it makes. */
  async function runNow(id: string) {
    expect((await api.post(`/report-schedules/${id}/run`, {})).status).toBe(200);
    return waitFor(async () => (await api.get(`/report-runs?schedule_id=${id}`)).body.data[0], 30_000, 'the run');
  }

  it('creates a Temporal Schedule with the cron expression and time zone, and emits report.scheduled', async () => {
    const created = await api.post('/report-schedules', { name: 'Weekly labour hours', report_type: 'labor_hours_by_project', cron: '0  6 * * 1', timezone: 'America/Toronto' });
    expect(created.status).toBe(201);
    const record = created.body;
    expect(record).toEqual({
      id: expect.any(String),
      name: 'Weekly labour hours',
      report_type: 'labor_hours_by_project',
      cron: '0 6 * * 1',
      timezone: 'America/Toronto',
      project_id: null,
      period_days: 7,
      schedule_id: `report-schedule/${record.id}`,
      state: 'active',
      next_run_at: expect.any(String),
      created_by: expect.any(String),
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const description = await handleOf(record.id).describe();
    expect(description.spec).toMatchObject({ timezone: 'America/Toronto' });
    expect(description.action).toMatchObject({ type: 'startWorkflow', workflowType: 'scheduledReport', workflowId: `report-run/${record.id}` });
    expect(description.info.nextActionTimes[0]!.toISOString()).toBe(record.next_run_at);
    // Mondays at 06:00 in Toronto.
    const parts = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Toronto', weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(new Date(record.next_run_at));
    const part = (type: string) => parts.find((p) => p.type === type)!.value;
    expect(`${part('weekday')} ${part('hour')}:${part('minute')}`).toBe('Mon 06:00');
  });

  it('runs: the report is stored, downloadable as JSON and CSV, and report.generated links to it', async () => {
    const { id } = await schedule({ timezone: 'UTC' });
    const run = await runNow(id);
    expect(run).toMatchObject({ schedule_id: id, status: 'generated', report_type: 'labor_hours_by_project', period_start: day(-7), period_end: day(-1), row_count: 2, failure_reason: null });
    expect(run.download_url).toBe(`${stack.config.publicBaseUrl}/api/v1/report-runs/${run.id}/download`);
    const json = await api.get(`/report-runs/${run.id}/download`);
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect(json.body).toEqual({
      report_type: 'labor_hours_by_project',
      name: 'Weekly labour hours',
      period_start: day(-7),
      period_end: day(-1),
      generated_at: expect.any(String),
      columns: ['project_id', 'project_code', 'project_name', 'hours', 'billable_hours', 'entries', 'employees'],
      rows: [
        { project_id: projectId, project_code: 'SR-1', project_name: 'Project SR-1', hours: 6.5, billable_hours: 6.5, entries: 1, employees: 1 },
        { project_id: null, project_code: null, project_name: null, hours: 1.5, billable_hours: 0, entries: 1, employees: 1 },
      ],
    });
    const csv = await fetch(`${run.download_url}?format=csv`.replace(stack.config.publicBaseUrl, stack.baseUrl), { headers: { 'X-API-Key': owner.key } });
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(await csv.text()).toBe(`project_id,project_code,project_name,hours,billable_hours,entries,employees\r\n${projectId},SR-1,Project SR-1,6.5,6.5,1,1\r\n,,,1.5,0,1,1\r\n`);
  });

  it('reports open work orders per project and status, with formula-like text made inert in CSV', async () => {
    const other = await seedProject(stack, owner, 'SR-2');
    await api.put(`/projects/${other}`, { name: '=SUM(A1:A9)' });
    await api.create('work-orders', { title: 'Late', project_id: other, status: 'on_hold', scheduled_start: '2020-01-01T08:00:00Z', scheduled_end: '2020-01-02T16:00:00Z' });
    const { id } = await schedule({ name: 'Open work orders', report_type: 'open_work_orders_by_project' });
    const run = await runNow(id);
    expect(run).toMatchObject({ status: 'generated', period_start: day(0), period_end: day(0), row_count: 2 });
    expect((await api.get(`/report-runs/${run.id}/download`)).body.rows).toEqual([
      { project_id: projectId, project_code: 'SR-1', project_name: 'Project SR-1', open: 1, scheduled: 0, in_progress: 1, on_hold: 0, total: 2, overdue: 0 },
      { project_id: other, project_code: 'SR-2', project_name: '=SUM(A1:A9)', open: 0, scheduled: 0, in_progress: 0, on_hold: 1, total: 1, overdue: 1 },
    ]);
    const csv = await fetch(`${stack.baseUrl}/api/v1/report-runs/${run.id}/download?format=csv`, { headers: { 'X-API-Key': owner.key } });
    expect(await csv.text()).toContain(`${other},SR-2,'=SUM(A1:A9),0,0,0,1,1,1\r\n`);
    expect(await api.get(`/report-runs/${run.id}/download?format=xml`)).toMatchObject({ status: 400, body: { error: { details: { field: 'format' } } } });
  });

  it('fails a run whose project was deleted: report.failed with the reason, and nothing to download', async () => {
    const doomed = await seedProject(stack, owner, 'SR-GONE');
    const { id } = await schedule({ name: 'Doomed', project_id: doomed });
    expect((await api.delete(`/projects/${doomed}`)).status).toBe(204);
    const run = await runNow(id);
    expect(run).toMatchObject({ status: 'failed', row_count: null, download_url: null, failure_reason: expect.stringContaining('no longer exists') });
    expect((await api.get(`/report-runs/${run.id}/download`)).body.error).toMatchObject({ code: 'CONFLICT' });
  });

  it('pauses and unpauses over REST and as the Temporal UI does; deletes the schedule and its Temporal Schedule, keeping its reports', async () => {
    const { id } = await schedule({ name: 'Pausable' });
    expect((await api.post(`/report-schedules/${id}/pause`, {})).body).toMatchObject({ state: 'paused', next_run_at: null });
    expect((await handleOf(id).describe()).state.paused).toBe(true);
    expect((await api.post(`/report-schedules/${id}/unpause`, {})).body).toMatchObject({ state: 'active', next_run_at: expect.any(String) });
    await handleOf(id).pause('from the Temporal UI');
    expect((await api.get(`/report-schedules/${id}`)).body.state).toBe('paused');
    const run = await runNow(id);

    expect((await api.delete(`/report-schedules/${id}`)).status).toBe(204);
    await expect(handleOf(id).describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
    expect((await api.get(`/report-schedules/${id}`)).status).toBe(404);
    expect((await api.get(`/report-runs/${run.id}`)).body).toMatchObject({ schedule_id: null, status: 'generated' });

    const other = await schedule({ name: 'Deleted in the UI' });
    await handleOf(other.id).delete();
    expect((await api.get(`/report-schedules/${other.id}`)).body).toMatchObject({ state: 'missing', next_run_at: null });
    expect((await api.post(`/report-schedules/${other.id}/pause`, {})).body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'state' } });
    expect((await api.delete(`/report-schedules/${other.id}`)).status).toBe(204);
  });

  it('refuses bad schedules with 400 naming the field, and makes no Temporal Schedule', async () => {
    const before = (await api.get('/report-schedules?limit=100')).body.pagination.total;
    const cases: [Record<string, unknown>, string][] = [
      [{ cron: '0 6 * *' }, 'cron'],
      [{ cron: '61 6 * * 1' }, 'cron'],
      [{ cron: '0 6 * * 1-9' }, 'cron'],
      [{ cron: '0 6 5-1 * *' }, 'cron'],
      [{ timezone: 'Mars/Olympus' }, 'timezone'],
      [{ report_type: 'open_work_orders_by_project', period_days: 7 }, 'period_days'],
      [{ project_id: unknownId() }, 'project_id'],
      [{ report_type: 'profit' }, 'report_type'],
    ];
    for (const [body, field] of cases) {
      const response = await api.post('/report-schedules', { name: 'Bad', report_type: 'labor_hours_by_project', cron: '0 6 * * 1', ...body });
      expect({ field, status: response.status, error: response.body.error?.details.field }).toEqual({ field, status: 400, error: field });
    }
    expect((await api.get('/report-schedules?limit=100')).body.pagination.total).toBe(before);
    const reader = await addApiKey(stack, owner, ['report-schedules:read']);
    expect((await request(stack.baseUrl, 'POST', `/api/v1/report-schedules`, { key: reader.key, body: { name: 'x', report_type: 'labor_hours_by_project', cron: '* * * * *' } })).status).toBe(403);
  });

  it('delivers report.scheduled, report.generated and report.failed over HTTPS in both shapes, each as its schema says', async () => {
    const { outbox, inA, inB } = await events.collect((name) => ['report.scheduled', 'report.generated', 'report.failed'].includes(name));
    for (const [deliveries, envelope, endpoint] of [[inA, SHAPE_A_ENVELOPE, events.endpointA], [inB, SHAPE_B_ENVELOPE, events.endpointB]] as const) {
      expect(deliveries).toHaveLength(outbox.length);
      expect([...new Set(deliveries.map((d) => d.event))].sort()).toEqual(['report.failed', 'report.generated', 'report.scheduled']);
      for (const delivery of deliveries) {
        expect(verifiedAsReceiver(endpoint.secret, delivery.request)).toBe(true);
        expect({ event: delivery.event, keys: Object.keys(delivery.body).sort() }).toEqual({ event: delivery.event, keys: envelope });
        expect({ event: delivery.event, problems: eventDataProblems('b', delivery.event, delivery.body.data) }).toEqual({ event: delivery.event, problems: [] });
      }
    }
    const generated = inB.find((d) => d.event === 'report.generated' && d.body.data.row_count === 2)!.body.data;
    expect(generated).toMatchObject({ report_type: 'labor_hours_by_project', formats: ['json', 'csv'], download_url: expect.stringMatching(/\/api\/v1\/report-runs\/[0-9a-f-]+\/download$/) });
    expect(inB.find((d) => d.event === 'report.failed')!.body.data).toMatchObject({ name: 'Doomed', reason: expect.stringContaining('no longer exists') });
    expect(inA.find((d) => d.event === 'report.scheduled')!.body.data).toMatchObject({ cron: '0 6 * * 1', timezone: 'America/Toronto', formats: ['json', 'csv'], period_days: 7 });
  });
});
