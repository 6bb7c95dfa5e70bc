import type { PayrollRunInput, PayrollRunResult } from '../src/domain/time/payroll-runs';
import type { TaskQueueRole } from '../src/task-queues';

export type { PayrollRunInput, PayrollRunResult };

/**
 * A period's payroll run, one at a time per company and period (id `payroll/<company>/<start>/<end>`), on the
 * operations task queue. Started by runPayroll (src/domain/time/payroll-runs.ts). No signals or updates.
 */
export const PAYROLL_RUN = 'payrollRun';

/** The task queue it and its activities run on (TEMPORAL_OPERATIONS_TASK_QUEUE names it). */
export const PAYROLL_RUN_TASK_QUEUE: TaskQueueRole = 'operations';
