import type { RetentionPeriods, RetentionTarget } from '../src/domain/retention';

/**
 * Retention, started by the Temporal Schedule `retention/<task queue>` (src/temporal/retention-schedule.ts, made
 * by every worker at start) on the service's task queue. No signals or updates.
 */
export const RETENTION = 'retention';

export interface RetentionInput {
  periods: RetentionPeriods;
  /** Rows per delete statement. */
  batchSize: number;
}

export type RetentionResult = Record<RetentionTarget, number>;
