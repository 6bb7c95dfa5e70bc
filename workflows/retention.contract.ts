import type { RetentionPeriods, RetentionTarget } from '../src/domain/retention';
import type { TaskQueueRole } from '../src/task-queues';

/**
 * Retention, started by the Temporal Schedule `retention/<task queue>` (src/temporal/retention-schedule.ts, made
 * by every worker at start) on the operations task queue. No signals or updates.
 */
export const RETENTION = 'retention';

/** The task queue it and its activities run on (TEMPORAL_OPERATIONS_TASK_QUEUE names it). */
export const RETENTION_TASK_QUEUE: TaskQueueRole = 'operations';

export interface RetentionInput {
  periods: RetentionPeriods;
  /** Rows per delete statement. */
  batchSize: number;
}

export type RetentionResult = Record<RetentionTarget, number>;
