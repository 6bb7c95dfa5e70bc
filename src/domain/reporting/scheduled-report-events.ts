import type { ReportRun, ReportSchedule } from './scheduled-report.entity';
import type { CatalogReportFailedData, CatalogReportGeneratedData, CatalogReportScheduledData } from '../../generated/schemas';
import { stamp } from '../event-format';

/*
 * Scheduled report events (6.2 report.scheduled, report.generated, report.failed): payloads of this service's
 * design (6.2 does not show them), documented in their schemas and the README.
 */

/** The formats every generated report can be downloaded in. */
export const REPORT_FORMATS = ['json', 'csv'];

export const reportScheduledData = (schedule: ReportSchedule, nextRunAt: string | null): CatalogReportScheduledData => ({
  schedule_id: schedule.id,
  report_type: schedule.reportType,
  name: schedule.name,
  cron: schedule.cron,
  timezone: schedule.timezone,
  formats: REPORT_FORMATS,
  project_id: schedule.projectId,
  period_days: schedule.periodDays,
  next_run_at: nextRunAt,
  ...stamp('created', schedule.createdAt, schedule.createdBy),
});

export const reportGeneratedData = (run: ReportRun, downloadUrl: string): CatalogReportGeneratedData => ({
  schedule_id: run.schedule!.id,
  run_id: run.id,
  report_type: run.reportType,
  name: run.name,
  period_start: run.periodStart,
  period_end: run.periodEnd,
  row_count: run.rows!.length,
  formats: REPORT_FORMATS,
  download_url: downloadUrl,
  generated_at: run.createdAt.toISOString(),
});

export const reportFailedData = (run: ReportRun): CatalogReportFailedData => ({
  schedule_id: run.schedule!.id,
  run_id: run.id,
  report_type: run.reportType,
  name: run.name,
  reason: run.failureReason!,
  failed_at: run.createdAt.toISOString(),
});
