import { proxyActivities } from '@temporalio/workflow';
import type { PayrollRunActivities } from '../activities/payroll-run';
import type { PayrollRunInput, PayrollRunResult } from './payroll-run.contract';

/** Timesheets per processing step: each is its own transaction; the step heartbeats after each. */
const CHUNK = 25;

const bookkeeping = proxyActivities<PayrollRunActivities>({
  // Short transactions; a worker that dies in one is noticed after this long.
  startToCloseTimeout: '30 seconds',
  // Bounded: an outage of a few minutes is ridden out, then the run fails and a new request starts a new run.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 12 },
});

const processing = proxyActivities<PayrollRunActivities>({
  startToCloseTimeout: '10 minutes',
  // A step that stops reporting (its worker was killed) is retried elsewhere within seconds.
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 12 },
});

/**
 * Payroll batch processing (webhooks.md 3): processes every timesheet of the period that is locked when the run
 * starts, each once (timesheet.processed), then records timesheets.processed.batch. Each timesheet is
 * processed in a transaction that also marks it with the run, so a step retried after a crash skips what a
 * killed attempt committed, and the batch event is recorded with the run's completion.
 */
export async function payrollRun(input: PayrollRunInput): Promise<PayrollRunResult> {
  const timesheetIds = await bookkeeping.openPayrollRun(input);
  for (let i = 0; i < timesheetIds.length; i += CHUNK) {
    await processing.processPayrollTimesheets(input, timesheetIds.slice(i, i + CHUNK));
  }
  return bookkeeping.closePayrollRun(input);
}
