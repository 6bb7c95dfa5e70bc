import { workflowDef } from '../src/domain/workflow-contract';

/**
 * One run of a report schedule, started by its Temporal Schedule (`report-schedule/<schedule id>`, made by
 * createReportSchedule in src/domain/reporting/report-schedules.ts) on the operations task queue. No signals or updates.
 */
export const SCHEDULED_REPORT = workflowDef<ScheduledReportInput, ScheduledReportResult>()({ name: 'scheduledReport', taskQueue: 'operations' });

/** Input of the scheduledReport workflow, fixed when the schedule is made. */
export interface ScheduledReportInput {
  companyId: string;
  scheduleId: string;
}

/** skipped: the schedule was deleted before its run. */
export interface ScheduledReportResult {
  status: 'generated' | 'failed' | 'skipped';
  runId: string | null;
}
