import { completionReports } from '../../domain/reporting/completion-reports';
import { defineResource } from './resource';
import { REPORT_FILTERS, reportRoutes } from './report-routes';

export const completionReportsResource = defineResource({
  collection: 'completion-reports',
  label: 'Completion report',
  plural: 'completion reports',
  description:
    'The report that a work order is done (webhooks.md 2.9). Its approval completes the work order; requires_approval false with is_auto_approved true completes it at once.',
  schema: 'rest/completion-reports.json',
  service: { list: completionReports.list.bind(completionReports), get: completionReports.get.bind(completionReports) },
  filters: REPORT_FILTERS,
  extraRoutes: (deps) => reportRoutes('completion', deps),
});
