import { restClient } from '../helpers/api-client';
import { outboxOf, seedEmployee } from '../helpers/fixtures';
import { spawnEntryPoint, stopProcess, waitFor, workerStarted } from '../helpers/processes';
import { holdRowLocks } from '../helpers/row-locks';
import { createTenant, processEnvOf, startStack, testConfig, type TestStack } from '../helpers/stack';

/**
 * The worker is killed with SIGKILL in the middle of a payroll batch: two timesheets are processed (committed,
 * with their events), the third waits for a row lock. A new worker finishes the batch: every timesheet is
 * processed once, every event is recorded once.
 */
describe('worker killed during a payroll run', () => {
  let stack: TestStack;

  beforeAll(async () => {
    // The API answers 202 after 2 s instead of waiting out the whole recovery.
    stack = await startStack({ worker: false, config: await testConfig({ INBOUND_WAIT_MS: '2000' }) });
  });
  afterAll(() => stack.close());

  it('processes each timesheet exactly once and emits each event once on the restarted worker', async () => {
    const tenant = await createTenant(stack.orm, ['admin']);
    const api = restClient(stack, tenant);
    const employee = await seedEmployee(stack, tenant, { name: 'Crash Test' });
    const days = ['2026-05-04', '2026-05-05', '2026-05-06', '2026-05-07', '2026-05-08'];
    const sheets: string[] = [];
    for (const day of days) sheets.push((await api.create('timesheets', { employee_id: employee, timesheet_date: day, status: 'locked', total_hours: 8 })).id);
    const workerEnv = processEnvOf(stack);

    // Holds the third timesheet's row: the run processes the first two, then waits inside the third's transaction.
    const locks = await holdRowLocks(stack.config.databaseUrl, 'select id from timesheets where id = $1 for update', [sheets[2]]);

    const first = spawnEntryPoint('worker/main.ts', workerEnv);
    let second: ReturnType<typeof spawnEntryPoint> | undefined;
    const processedCount = async () => Number((await locks.query("select count(*) as n from timesheets where employee_id = $1 and status = 'processed'", [employee])).rows[0].n);
    try {
      await workerStarted(first, 'first');
      const response = await api.post('/payroll-runs', { period_start: '2026-05-01', period_end: '2026-05-31' });
      expect(response.status).toBe(202);
      expect(response.body).toEqual({ id: expect.any(String), status: 'running', workflow_id: `payroll/${tenant.companyId}/2026-05-01/2026-05-31` });
      const runId = response.body.id;

      await locks.waitForWaiter('the run to wait for the third timesheet');
      expect(await processedCount()).toBe(2);
      await stopProcess(first, 'SIGKILL');
      await locks.release();
      // The killed worker's transaction ends when its backend next touches the dead connection.
      await waitFor(
        async () => (await locks.query("select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'")).rows.length === 0,
        30_000,
        'the killed transaction to end',
      );
      expect(await processedCount()).toBe(2);
      expect((await api.get(`/payroll-runs/${runId}`)).body).toMatchObject({ status: 'running', total_count: null, timesheet_ids: sheets.slice(0, 2) });

      second = spawnEntryPoint('worker/main.ts', workerEnv);

      await workerStarted(second, 'second');
      const result = await stack.temporal.workflow.getHandle(response.body.workflow_id).result();
      expect(result).toEqual({ runId, totalCount: 5 });

      const run = (await api.get(`/payroll-runs/${runId}`)).body;
      expect(run).toMatchObject({ status: 'completed', total_count: 5, timesheet_ids: sheets });
      const events = await outboxOf(stack, tenant.companyId);
      const processed = events.filter((e) => e.event_type === 'timesheet.processed').map((e) => e.data.timesheet_id);
      expect(processed.sort()).toEqual([...sheets].sort());
      const batches = events.filter((e) => e.event_type === 'timesheets.processed.batch');
      expect(batches).toHaveLength(1);
      expect(batches[0]!.data.total_count).toBe(5);
      expect(batches[0]!.data.timesheets.map((t: { id: string }) => t.id)).toEqual(sheets);
      console.log(
        `Worker SIGKILL during a payroll run: 2 of 5 timesheets processed before the kill, the third's transaction rolled back; ` +
          `afterwards 5 processed, ${processed.length} timesheet.processed events and ${batches.length} batch event`,
      );
    } finally {
      await locks.end();
      await stopProcess(first, 'SIGKILL');
      if (second) await stopProcess(second);
    }
  }, 300_000);
});
