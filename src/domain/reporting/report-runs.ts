import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../errors';
import type { GeneratedReport, ReportRun as ReportRunRecord } from '../../generated/schemas';
import { idOf } from '../page';
import { RecordService } from '../records/record-service';
import { REPORT_TYPE_DEFINITIONS, toCsv } from './report-types';
import { ReportRun } from './scheduled-report.entity';

/** What the database keeps of a run; its download URL depends on where the API is (PUBLIC_BASE_URL). */
type StoredRun = Omit<ReportRunRecord, 'download_url'>;

export const reportDownloadUrl = (baseUrl: string, runId: string) => `${baseUrl}/api/v1/report-runs/${runId}/download`;

/** The runs of scheduled reports, read-only: the scheduledReport workflow writes them. */
export const reportRuns = new RecordService<ReportRun, StoredRun>({
  entity: ReportRun,
  label: 'Report run',
  wire: {
    schedule_id: { read: (view) => idOf((view as unknown as { schedule: string | { id: string } | null }).schedule) },
    report_type: 'reportType',
    name: 'name',
    status: 'status',
    period_start: 'periodStart',
    period_end: 'periodEnd',
    row_count: 'rowCount',
    failure_reason: 'failureReason',
    workflow_id: 'workflowId',
  },
});

export const withDownloadUrl = (baseUrl: string, run: StoredRun): ReportRunRecord => ({ ...run, download_url: run.status === 'generated' ? reportDownloadUrl(baseUrl, run.id) : null });

/** A generated report as JSON, or as CSV with the same columns and rows; a failed run is a 409 with its reason. */
export async function downloadReport(em: EntityManager, companyId: string, id: string, format: 'json' | 'csv'): Promise<{ type: string; body: GeneratedReport | string; filename: string }> {
  const run = await em.findOne(ReportRun, { id, company: companyId }, { populate: ['rows'] });
  if (!run) throw ApiError.notFound('Report run');
  if (run.status === 'failed') throw new ApiError('CONFLICT', `This run failed and has no report: ${run.failureReason}`, { field: null, reason: 'the run failed' });
  const { columns } = REPORT_TYPE_DEFINITIONS[run.reportType];
  const filename = `${run.reportType}-${run.periodEnd}.${format}`;
  if (format === 'csv') return { type: 'text/csv', body: toCsv(columns, run.rows!), filename };
  const report = { report_type: run.reportType, name: run.name, period_start: run.periodStart, period_end: run.periodEnd, generated_at: run.createdAt.toISOString(), columns: [...columns], rows: run.rows! };
  return { type: 'application/json', body: report, filename };
}
