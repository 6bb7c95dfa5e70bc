import type { ScheduledReportInput } from '../src/domain/reporting/report-schedules';
import type { TaskQueueRole } from '../src/task-queues';

export type { ScheduledReportInput };

/**
 * One run of a report schedule, started by its Temporal Schedule (`report-schedule/<schedule id>`, made by
 * createReportSchedule in src/domain/reporting/report-schedules.ts) on the operations task queue. No signals or updates.
 */
export const SCHEDULED_REPORT = 'scheduledReport';

/** The task queue it and its activities run on (TEMPORAL_OPERATIONS_TASK_QUEUE names it). */
export const SCHEDULED_REPORT_TASK_QUEUE: TaskQueueRole = 'operations';

/** skipped: the schedule was deleted before its run. */
export interface ScheduledReportResult {
  status: 'generated' | 'failed' | 'skipped';
  runId: string | null;
}
