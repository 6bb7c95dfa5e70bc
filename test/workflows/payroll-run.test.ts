import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { PayrollRunActivities } from '../../activities/payroll-run';
import type { PayrollRunInput } from '../../workflows/payroll-run.contract';
import { withActivityFailures } from '../../src/temporal/failures';
import type { payrollRun } from '../../workflows/payroll-run';
import { createTimeSkippingEnv, recordingCalls, withWorker } from '../helpers/time-skipping';

// workflows/payroll-run.ts in skipped time, its activities mocked (wrapped as the worker wraps them).
let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createTimeSkippingEnv();
});
afterAll(() => env?.teardown());

let runNumber = 0;
function newRun(): PayrollRunInput {
  const n = String(++runNumber).padStart(12, '0');
  return {
    actor: { companyId: '10000000-0000-4000-8000-000000000001', apiKeyId: '20000000-0000-4000-8000-000000000001' },
    runId: `30000000-0000-4000-8000-${n}`,
    periodStart: '2026-11-01',
    periodEnd: '2026-11-15',
  };
}

const timesheetIds = (count: number) => Array.from({ length: count }, (_, i) => `ts-${i + 1}`);

function payrollActivities(locked: string[], processChunk: (ids: string[]) => void = () => undefined) {
  return recordingCalls(
    env,
    withActivityFailures<PayrollRunActivities>({
      openPayrollRun: async () => locked,
      processPayrollTimesheets: async (_input, ids) => processChunk(ids),
      closePayrollRun: async (input) => ({ runId: input.runId, totalCount: locked.length }),
    }),
  );
}

const runPayroll = (taskQueue: string, input: PayrollRunInput) =>
  env.client.workflow.execute<typeof payrollRun>('payrollRun', { taskQueue, workflowId: `payroll/${input.runId}`, args: [input] });

describe('payrollRun in skipped time', () => {
  test('processes the locked timesheets 25 at a time, in order, then closes the run', async () => {
    const locked = timesheetIds(60);
    const { activities, calls } = payrollActivities(locked);
    const input = newRun();
    await withWorker(env, activities, async (taskQueue) => {
      expect(await runPayroll(taskQueue, input)).toEqual({ runId: input.runId, totalCount: 60 });
    });
    expect(calls.map(({ name, args }) => ({ name, args }))).toEqual([
      { name: 'openPayrollRun', args: [input] },
      { name: 'processPayrollTimesheets', args: [input, locked.slice(0, 25)] },
      { name: 'processPayrollTimesheets', args: [input, locked.slice(25, 50)] },
      { name: 'processPayrollTimesheets', args: [input, locked.slice(50)] },
      { name: 'closePayrollRun', args: [input] },
    ]);
  });

  test('a period without locked timesheets is closed at once', async () => {
    const { activities, calls } = payrollActivities([]);
    const input = newRun();
    await withWorker(env, activities, async (taskQueue) => {
      expect(await runPayroll(taskQueue, input)).toEqual({ runId: input.runId, totalCount: 0 });
    });
    expect(calls.map((call) => call.name)).toEqual(['openPayrollRun', 'closePayrollRun']);
  });

  test('a processing step that fails is retried with the same timesheets, and the run goes on after it', async () => {
    const locked = timesheetIds(30);
    let failures = 2;
    const { activities, calls } = payrollActivities(locked, (ids) => {
      if (ids[0] === 'ts-26' && failures-- > 0) throw new Error('Connection terminated unexpectedly');
    });
    await withWorker(env, activities, async (taskQueue) => {
      expect(await runPayroll(taskQueue, newRun())).toMatchObject({ totalCount: 30 });
    });
    const steps = calls.filter((call) => call.name === 'processPayrollTimesheets');
    expect(steps.map((call) => (call.args[1] as string[]).length)).toEqual([25, 5, 5, 5]);
    // Retried after 1 s, then 2 s.
    expect(steps[3]!.atMs - steps[1]!.atMs).toBeGreaterThanOrEqual(3000);
    expect(calls.at(-1)!.name).toBe('closePayrollRun');
  });
});
