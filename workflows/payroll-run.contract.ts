import type { Actor } from '../src/domain/accounts/actor';
import { workflowDef } from '../src/domain/workflow-contract';

/**
 * A period's payroll run, one at a time per company and period (id `payroll/<company>/<start>/<end>`), on the
 * operations task queue. Started by runPayroll (src/domain/time/payroll-runs.ts). No signals or updates.
 */
export const PAYROLL_RUN = workflowDef<PayrollRunInput, PayrollRunResult>()({ name: 'payrollRun', taskQueue: 'operations' });

/** Input of the payrollRun workflow: everything needed to run it again from scratch. */
export interface PayrollRunInput {
  actor: Actor;
  /** Chosen before the workflow starts, so a retried step finds the run its first attempt recorded. */
  runId: string;
  periodStart: string;
  periodEnd: string;
}

export interface PayrollRunResult {
  runId: string;
  totalCount: number;
}
