import { readScope } from '../../domain/accounts/scopes';
import { downloadReport, reportRuns, withDownloadUrl } from '../../domain/reporting/report-runs';
import { REPORT_TYPES } from '../../domain/reporting/scheduled-report.entity';
import { ApiError } from '../../errors';
import type { QueryParam } from '../routes/route-spec';
import { byId, byValue } from './filters';
import { defineResource } from './resource';

const format: QueryParam = {
  name: 'format',
  description: 'json (default) or csv.',
  schema: { enum: ['json', 'csv'] },
  parse(raw) {
    if (raw !== 'json' && raw !== 'csv') throw ApiError.invalid('format', 'must be json or csv');
    return raw;
  },
};

export const reportRunsResource = defineResource({
  collection: 'report-runs',
  label: 'Report run',
  plural: 'report runs',
  description: 'The runs of scheduled reports: each generated report (download it as JSON or CSV) or failed run (with its reason). Kept when their schedule is deleted.',
  schema: 'rest/report-runs.json',
  service: ({ config }) => ({
    async list(em, companyId, page, where) {
      const found = await reportRuns.list(em, companyId, page, where);
      return { ...found, items: found.items.map((run) => withDownloadUrl(config.publicBaseUrl, run)) };
    },
    get: async (em, companyId, id) => withDownloadUrl(config.publicBaseUrl, await reportRuns.get(em, companyId, id)),
  }),
  filters: [
    byId('schedule_id', 'schedule', 'Runs of this schedule.'),
    byValue('status', 'status', ['generated', 'failed'], 'Generated or failed runs.'),
    byValue('report_type', 'reportType', REPORT_TYPES, 'Runs of this report type.'),
  ],
  extraRoutes: () => [
    {
      method: 'GET',
      path: '/report-runs/{id}/download',
      tag: 'report-runs',
      record: 'Report run',
      scope: readScope('report-runs'),
      summary: 'Download a generated report',
      description: 'As JSON (its columns and rows), or with format=csv as CSV with the same columns; the download_url of report.generated. A failed run is a 409 with its reason.',
      query: [format],
      responses: { 200: { description: 'The report', schema: 'rest/report-runs.json#/$defs/report', fileTypes: ['text/csv'] } },
      async handler(ctx) {
        const report = await downloadReport(ctx.state.em, ctx.state.principal.companyId, ctx.params.id!, (ctx.state.query.format as 'json' | 'csv' | undefined) ?? 'json');
        ctx.set('Content-Disposition', `attachment; filename="${report.filename}"`);
        ctx.type = report.type;
        ctx.body = report.body;
      },
    },
  ],
});
