import type { RetentionPeriods, RetentionTarget } from '../src/domain/retention';
import { workflowDef } from '../src/domain/workflow-contract';

/**
 * Retention, started by the Temporal Schedule `retention/<task queue>` (src/temporal/retention-schedule.ts, made
 * by every worker at start) on the operations task queue. No signals or updates.
 */
export const RETENTION = workflowDef<RetentionInput, RetentionResult>()({ name: 'retention', taskQueue: 'operations' });

export interface RetentionInput {
  periods: RetentionPeriods;
  /** Rows per delete statement. */
  batchSize: number;
}

export type RetentionResult = Record<RetentionTarget, number>;
