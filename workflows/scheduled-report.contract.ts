import type { ScheduledReportInput } from '../src/domain/reporting/report-schedules';

export type { ScheduledReportInput };

/**
 * One run of a report schedule, started by its Temporal Schedule (`report-schedule/<schedule id>`, made by
 * createReportSchedule in src/domain/reporting/report-schedules.ts) on the service's task queue. No signals or updates.
 */
export const SCHEDULED_REPORT = 'scheduledReport';

/** skipped: the schedule was deleted before its run. */
export interface ScheduledReportResult {
  status: 'generated' | 'failed' | 'skipped';
  runId: string | null;
}
