import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { ReportApprovalActivities } from '../../activities/report-approval';
import { SETTINGS } from '../../src/config';
import { withActivityFailures } from '../../src/temporal/failures';
import { APPROVAL_STATUS } from '../../workflows/search-attributes';
import type { reportApproval } from '../../workflows/report-approval';
import { temporalSignal } from '../../workflows/messages';
import { REPORT_APPROVAL, type ReportApprovalInput, type ReportApprovalResult, type ReportDecision } from '../../workflows/report-approval.contract';

import { createTimeSkippingEnv, recordingCalls, runDurationMs, withWorker } from '../helpers/time-skipping';

const decideReportSignal = temporalSignal(REPORT_APPROVAL.signals.decide);

// workflows/report-approval.ts in skipped time, its activities mocked (wrapped as the worker wraps them), with the
// service's default approval deadline.
const HOUR = 3_600_000;
const DEADLINE_MS = SETTINGS.REPORT_APPROVAL_DEADLINE.parse(SETTINGS.REPORT_APPROVAL_DEADLINE.default);

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createTimeSkippingEnv();
});
afterAll(() => env?.teardown());

let reportNumber = 0;
function newReport(): ReportApprovalInput {
  const n = String(++reportNumber).padStart(12, '0');
  return { companyId: '10000000-0000-4000-8000-000000000001', kind: 'completion', reportId: `30000000-0000-4000-8000-${n}`, deadlineMs: DEADLINE_MS };
}

const decision = (approve: boolean): ReportDecision => ({
  approve,
  actor: { companyId: '10000000-0000-4000-8000-000000000001', apiKeyId: '20000000-0000-4000-8000-000000000001' },
  employeeId: '40000000-0000-4000-8000-000000000001',
  notes: approve ? 'Looks complete' : 'Photos missing',
  eventId: '50000000-0000-4000-8000-000000000001',
});

/** The steps for a report that is there (`awaits`) until `reminderFindsItGone`; the decision applied as taken. */
function approvalActivities({ awaits = true, reminderFindsItGone = Infinity } = {}) {
  return recordingCalls(
    env,
    withActivityFailures<ReportApprovalActivities>({
      reportAwaitsApproval: async () => awaits,
      remindReportApproval: async (_input, reminder) => reminder < reminderFindsItGone,
      decideReport: async (_input, taken): Promise<ReportApprovalResult> => ({ outcome: taken.approve ? 'approved' : 'rejected', eventId: taken.approve ? taken.eventId : null }),
    }),
  );
}

const start = (taskQueue: string, input: ReportApprovalInput) =>
  env.client.workflow.start<typeof reportApproval>('reportApproval', { taskQueue, workflowId: `report-approval/${input.reportId}`, args: [input] });
const approvalStatus = async (handle: WorkflowHandle) => (await handle.describe()).typedSearchAttributes.get(APPROVAL_STATUS);

describe('reportApproval in skipped time', () => {
  test('the default deadline is 48 h', () => {
    expect(DEADLINE_MS).toBe(48 * HOUR);
  });

  test('a decision before the deadline is applied, without a reminder', async () => {
    const { activities, calls } = approvalActivities();
    const input = newReport();
    await withWorker(env, activities, async (taskQueue) => {
      const handle = await start(taskQueue, input);
      await env.sleep(DEADLINE_MS / 2);
      await handle.signal(decideReportSignal, decision(true));
      expect(await handle.result()).toEqual({ outcome: 'approved', eventId: '50000000-0000-4000-8000-000000000001' });
      expect(await runDurationMs(handle)).toBeGreaterThanOrEqual(DEADLINE_MS / 2);
      expect(await runDurationMs(handle)).toBeLessThan(DEADLINE_MS);
      expect(await approvalStatus(handle)).toBe('approved');
    });
    expect(calls.map(({ name, args }) => ({ name, args }))).toEqual([
      { name: 'reportAwaitsApproval', args: [input] },
      { name: 'decideReport', args: [input, decision(true)] },
    ]);
  });

  test('without a decision it reminds at each deadline (48 h, 96 h), shown as overdue, and still takes the decision after', async () => {
    const { activities, calls } = approvalActivities();
    const input = newReport();
    await withWorker(env, activities, async (taskQueue) => {
      const startedAt = await env.currentTimeMs();
      const handle = await start(taskQueue, input);
      await env.sleep(2 * DEADLINE_MS + HOUR);
      expect(await approvalStatus(handle)).toBe('overdue');
      await handle.signal(decideReportSignal, decision(false));
      expect(await handle.result()).toEqual({ outcome: 'rejected', eventId: null });
      expect(await approvalStatus(handle)).toBe('rejected');

      const reminders = calls.filter((call) => call.name === 'remindReportApproval');
      expect(reminders.map((call) => call.args[1])).toEqual([1, 2]);
      reminders.forEach((call, i) => {
        expect(call.atMs - startedAt).toBeGreaterThanOrEqual((i + 1) * DEADLINE_MS);
        expect(call.atMs - startedAt).toBeLessThan((i + 1) * DEADLINE_MS + HOUR);
      });
    });
    expect(calls.map((call) => call.name)).toEqual(['reportAwaitsApproval', 'remindReportApproval', 'remindReportApproval', 'decideReport']);
  });

  test('the first decision counts; a later one is ignored', async () => {
    const { activities, calls } = approvalActivities();
    const input = newReport();
    await withWorker(env, activities, async (taskQueue) => {
      const handle = await start(taskQueue, input);
      await handle.signal(decideReportSignal, decision(false));
      await handle.signal(decideReportSignal, decision(true));
      expect(await handle.result()).toEqual({ outcome: 'rejected', eventId: null });
    });
    expect(calls.filter((call) => call.name === 'decideReport').map((call) => call.args[1])).toEqual([decision(false)]);
  });

  test('a report that is not there (never recorded, or deleted) ends the approval as cancelled at once', async () => {
    const { activities, calls } = approvalActivities({ awaits: false });
    await withWorker(env, activities, async (taskQueue) => {
      const handle = await start(taskQueue, newReport());
      expect(await handle.result()).toEqual({ outcome: 'cancelled', eventId: null });
      expect(await approvalStatus(handle)).toBe('cancelled');
    });
    expect(calls.map((call) => call.name)).toEqual(['reportAwaitsApproval']);
  });

  test('a reminder that finds the report gone (deleted with its work order) ends the approval as cancelled', async () => {
    const { activities, calls } = approvalActivities({ reminderFindsItGone: 2 });
    await withWorker(env, activities, async (taskQueue) => {
      const handle = await start(taskQueue, newReport());
      expect(await handle.result()).toEqual({ outcome: 'cancelled', eventId: null });
      expect(await runDurationMs(handle)).toBeGreaterThanOrEqual(2 * DEADLINE_MS);
      expect(await runDurationMs(handle)).toBeLessThan(2 * DEADLINE_MS + HOUR);
    });
    expect(calls.map((call) => call.name)).toEqual(['reportAwaitsApproval', 'remindReportApproval', 'remindReportApproval']);
  });
});
