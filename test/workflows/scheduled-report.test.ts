import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { ScheduledReportActivities, ScheduledRun } from '../../activities/scheduled-report';
import type { ScheduledReportInput } from '../../workflows/scheduled-report.contract';
import { withActivityFailures } from '../../src/temporal/failures';
import type { scheduledReport } from '../../workflows/scheduled-report';
import { createTimeSkippingEnv, recordingCalls, withWorker } from '../helpers/time-skipping';

// workflows/scheduled-report.ts in skipped time, its activities mocked (wrapped as the worker wraps them).
let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createTimeSkippingEnv();
});
afterAll(() => env?.teardown());

const input: ScheduledReportInput = { companyId: '10000000-0000-4000-8000-000000000001', scheduleId: '20000000-0000-4000-8000-000000000001' };

function reportActivities(generate: ScheduledReportActivities['generateScheduledReport']) {
  return recordingCalls(
    env,
    withActivityFailures<ScheduledReportActivities>({
      generateScheduledReport: generate,
      recordScheduledReportFailure: async () => ({ status: 'failed', runId: 'run-failed' }),
    }),
  );
}

const runReport = (taskQueue: string, workflowId: string) => env.client.workflow.execute<typeof scheduledReport>('scheduledReport', { taskQueue, workflowId, args: [input] });

describe('scheduledReport in skipped time', () => {
  test('generates the report for the run, known by its workflow id and start time', async () => {
    const { activities, calls } = reportActivities(async () => ({ status: 'generated', runId: 'run-1' }));
    await withWorker(env, activities, async (taskQueue) => {
      const startedAt = await env.currentTimeMs();
      expect(await runReport(taskQueue, 'scheduled-report/generated')).toEqual({ status: 'generated', runId: 'run-1' });
      const run = calls[0]!.args[0] as ScheduledRun;
      expect(run).toEqual({ ...input, workflowId: 'scheduled-report/generated', at: expect.any(String) });
      expect(Math.abs(Date.parse(run.at) - startedAt)).toBeLessThan(5000);
    });
    expect(calls.map((call) => call.name)).toEqual(['generateScheduledReport']);
  });

  test('a report that cannot be generated after 8 attempts (about 1.5 minutes) is recorded as failed, with the reason', async () => {
    const { activities, calls } = reportActivities(async () => {
      throw new Error('Connection terminated unexpectedly');
    });
    await withWorker(env, activities, async (taskQueue) => {
      expect(await runReport(taskQueue, 'scheduled-report/failed')).toEqual({ status: 'failed', runId: 'run-failed' });
    });
    const attempts = calls.filter((call) => call.name === 'generateScheduledReport');
    expect(attempts).toHaveLength(8);
    // Waits of 1, 2, 4, 8 and 16 s, then 30 s (the maximum) twice.
    expect(attempts.at(-1)!.atMs - attempts[0]!.atMs).toBeGreaterThanOrEqual(91_000);
    const failure = calls.at(-1)!;
    expect(failure.name).toBe('recordScheduledReportFailure');
    expect(failure.args).toEqual([attempts[0]!.args[0], 'Connection terminated unexpectedly']);
  });
});
