import { actorOf } from '../../domain/accounts/actor';
import { TIMESHEETS_APPROVE_SCOPE, TIMESHEETS_PROCESS_SCOPE, writeScope } from '../../domain/accounts/scopes';
import { TIMESHEET_STATUSES } from '../../domain/time/timesheet.entity';
import { changeTimesheetStatus, TIMESHEET_ACTIONS, type TimesheetAction } from '../../domain/time/timesheet-lifecycle';
import { removeTimesheetEntry, timesheets } from '../../domain/time/timesheets';
import type { RouteSpec } from '../routes/route-spec';
import { byDate, byId, byValue } from './filters';
import { defineResource } from './resource';

const RECORD = 'rest/timesheets.json#/$defs/record';

/** Who may take each lifecycle action: the employee's side submits, a manager locks and unlocks, payroll processes. */
const ACTION_SCOPES: Record<TimesheetAction, string> = {
  submit: writeScope('timesheets'),
  lock: TIMESHEETS_APPROVE_SCOPE,
  unlock: TIMESHEETS_APPROVE_SCOPE,
  process: TIMESHEETS_PROCESS_SCOPE,
};

const ACTION_SUMMARIES: Record<TimesheetAction, string> = {
  submit: 'Submit a draft timesheet',
  lock: 'Lock a submitted timesheet (a manager approves it; edits are refused from then on)',
  unlock: 'Unlock a locked timesheet: it returns to draft, editable, to be submitted again',
  process: 'Process a locked timesheet for payroll',
};

function lifecycleRoutes(): RouteSpec[] {
  return (Object.keys(TIMESHEET_ACTIONS) as TimesheetAction[]).map((action) => ({
    method: 'POST',
    path: `/timesheets/{id}/${action}`,
    tag: 'timesheets',
    record: 'Timesheet',
    scope: ACTION_SCOPES[action],
    summary: ACTION_SUMMARIES[action],
    description:
      `From ${TIMESHEET_ACTIONS[action].from} to ${TIMESHEET_ACTIONS[action].to}, emitting timesheet.${action === 'submit' ? 'submitted' : `${action}ed`}. ` +
      `Any other status is a 409 naming it. No body.`,
    responses: { 200: { description: 'The timesheet as it is now', schema: RECORD } },
    async handler(ctx) {
      ctx.body = await changeTimesheetStatus(ctx.state.em, actorOf(ctx.state.principal), ctx.params.id!, action);
    },
  }));
}

export const timesheetsResource = defineResource({
  collection: 'timesheets',
  label: 'Timesheet',
  plural: 'timesheets',
  description:
    'One timesheet per employee per day, with its entries (work type by code, by name or the default; a work order where the type needs one). ' +
    'Lifecycle: draft → submit → submitted → lock → locked → process → processed; unlock returns a locked timesheet to draft. ' +
    'Locked and processed timesheets refuse edits and deletion (409).',
  schema: 'rest/timesheets.json',
  service: timesheets,
  filters: [
    byId('employee_id', 'employee', 'Timesheets of this employee.'),
    byValue('status', 'status', TIMESHEET_STATUSES, 'Timesheets in this status.'),
    byDate('date_from', 'Timesheets of this day or later.', (date) => ({ timesheetDate: { $gte: date } })),
    byDate('date_to', 'Timesheets of this day or earlier.', (date) => ({ timesheetDate: { $lte: date } })),
  ],
  extraRoutes: () => [
    ...lifecycleRoutes(),
    {
      method: 'DELETE',
      path: '/timesheets/{id}/entries/{entry_id}',
      tag: 'timesheets',
      record: 'Timesheet',
      pathRecords: { entry_id: 'Timesheet entry' },
      scope: writeScope('timesheets'),
      summary: 'Delete an entry of a timesheet',
      description: 'Emits timesheet.updated (entry_deleted). Refused with 409 while the timesheet is locked or processed.',
      responses: { 204: { description: 'Deleted' } },
      async handler(ctx) {
        await removeTimesheetEntry(ctx.state.em, actorOf(ctx.state.principal), ctx.params.id!, ctx.params.entry_id!);
        ctx.status = 204;
      },
    },
  ],
});
