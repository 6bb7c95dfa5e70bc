import type { PayrollRunInput, PayrollRunResult } from '../src/domain/time/payroll-runs';

export type { PayrollRunInput, PayrollRunResult };

/**
 * A period's payroll run, one at a time per company and period (id `payroll/<company>/<start>/<end>`), on the
 * service's task queue. Started by runPayroll (src/domain/time/payroll-runs.ts). No signals or updates.
 */
export const PAYROLL_RUN = 'payrollRun';
