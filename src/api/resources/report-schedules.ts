import { actorOf } from '../../domain/accounts/actor';
import { writeScope } from '../../domain/accounts/scopes';
import {
  createReportSchedule,
  getReportSchedule,
  listReportSchedules,
  pauseReportSchedule,
  removeReportSchedule,
  runReportScheduleNow,
  unpauseReportSchedule,
} from '../../domain/reporting/report-schedules';
import { REPORT_TYPES } from '../../domain/reporting/scheduled-report.entity';
import type { ReportScheduleCreate } from '../../generated/schemas';
import type { AppDeps } from '../context';
import type { RouteSpec } from '../routes/route-spec';
import { byId, byValue } from './filters';
import { defineResource } from './resource';

const RECORD = 'rest/report-schedules.json#/$defs/record';

/** Pause, unpause and run now: what the Temporal UI offers on the Schedule, over REST. */
function scheduleActions({ workflows }: AppDeps): RouteSpec[] {
  const actions = [
    ['pause', 'Pause a report schedule', 'No runs until it is unpaused (the Temporal UI pauses it the same way).', pauseReportSchedule],
    ['unpause', 'Unpause a report schedule', 'Runs resume at the next time the cron expression names.', unpauseReportSchedule],
    [
      'run',
      'Run a scheduled report now',
      'Starts a run at once, as the schedule would (also when paused): report.generated or report.failed follows; GET /report-runs?schedule_id= finds it.',
      (em, t, actor, id) => runReportScheduleNow(em, t, actor.companyId, id),
    ],
  ] as const satisfies readonly (readonly [string, string, string, typeof pauseReportSchedule])[];
  return actions.map(([action, summary, description, act]) => ({
    method: 'POST',
    path: `/report-schedules/{id}/${action}`,
    tag: 'report-schedules',
    record: 'Report schedule',
    scope: writeScope('report-schedules'),
    summary,
    description,
    responses: { 200: { description: 'The schedule as it is now', schema: RECORD } },
    async handler(ctx) {
      ctx.body = await act(ctx.state.em, workflows.schedules, actorOf(ctx.state.principal), ctx.params.id!);
    },
  }));
}

export const reportSchedulesResource = defineResource({
  collection: 'report-schedules',
  label: 'Report schedule',
  plural: 'report schedules',
  description:
    'Recurring reports (labor_hours_by_project, open_work_orders_by_project), each a Temporal Schedule running on its cron expression and time zone. ' +
    'Creating one emits report.scheduled; each run stores the report (report-runs: JSON, or CSV) and emits report.generated, or report.failed with the reason. ' +
    'state shows whether it is paused, over REST or in the Temporal UI.',
  schema: 'rest/report-schedules.json',
  service: ({ workflows: { schedules } }) => ({
    list: (em, companyId, page, where) => listReportSchedules(em, schedules, companyId, page, where),
    get: (em, companyId, id) => getReportSchedule(em, schedules, companyId, id),
    create: (em, actor, input: ReportScheduleCreate) => createReportSchedule(em, schedules, actor, input),
    remove: (em, actor, id) => removeReportSchedule(em, schedules, actor, id),
  }),
  filters: [byValue('report_type', 'reportType', REPORT_TYPES, 'Schedules of this report type.'), byId('project_id', 'projectId', 'Schedules of this project.')],
  extraRoutes: scheduleActions,
});
