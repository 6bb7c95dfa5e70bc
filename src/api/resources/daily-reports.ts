import { dailyReports } from '../../domain/reporting/daily-reports';
import { defineResource } from './resource';
import { REPORT_FILTERS, reportRoutes } from './report-routes';

export const dailyReportsResource = defineResource({
  collection: 'daily-reports',
  label: 'Daily report',
  plural: 'daily reports',
  description:
    "A day's report on a work order (webhooks.md 2.9), one per work order and day. Each waits for a manager's approval (approve or reject) unless is_auto_approved is true.",
  schema: 'rest/daily-reports.json',
  service: { list: dailyReports.list.bind(dailyReports), get: dailyReports.get.bind(dailyReports) },
  filters: REPORT_FILTERS,
  extraRoutes: (deps) => reportRoutes('daily', deps),
});
