import type { EntityManager } from '@mikro-orm/postgresql';
import type { TimesheetCreate, Timesheet as TimesheetRecord, TimesheetEntryChange, TimesheetUpdate } from '../../generated/schemas';
import { timesheetCreatedPayload, timesheetDeletedPayload, timesheetUpdatedEvents } from './time-events';
import { ApiError } from '../../errors';
import { iso } from '../event-format';
import type { Actor } from '../accounts/actor';
import { idOf } from '../page';
import { Employee } from '../people/employee.entity';
import { RecordService } from '../records/record-service';
import { Timesheet, type TimesheetStatus } from './timesheet.entity';
import { timesheetEntryRecord, writeEntries } from './timesheet-entries';

/** Statuses in which a timesheet can no longer be edited or deleted (webhooks.md 3: "edits prevented"). */
const FROZEN: readonly TimesheetStatus[] = ['locked', 'processed'];

/** 409 naming the status while the timesheet is locked or processed. */
export function assertEditable(timesheet: Timesheet): void {
  if (!FROZEN.includes(timesheet.status)) return;
  const advice = timesheet.status === 'locked' ? 'a manager has to unlock it first' : 'processed timesheets are final';
  throw new ApiError('CONFLICT', `The timesheet is ${timesheet.status} and cannot be changed: ${advice}`, { field: 'status', reason: `is ${timesheet.status}` });
}

/** A timesheet created in a later status has passed the earlier ones at creation. */
function startIn(timesheet: Timesheet, status: TimesheetStatus): void {
  const at = timesheet.createdAt;
  timesheet.status = status;
  timesheet.submittedAt = status === 'draft' ? null : at;
  timesheet.lockedAt = status === 'locked' || status === 'processed' ? at : null;
  timesheet.processedAt = status === 'processed' ? at : null;
}

/**
 * Timesheets (webhooks.md 2.8): one per employee per day, with entries. Locked and processed ones refuse
 * edits and deletion (409). Status changes of existing timesheets are the lifecycle's (timesheet-lifecycle.ts).
 */
export const timesheets = new RecordService<Timesheet, TimesheetRecord, TimesheetCreate, TimesheetUpdate>({
  entity: Timesheet,
  label: 'Timesheet',
  wire: {
    employee_id: { relation: 'employee', target: Employee, label: 'an employee' },
    timesheet_date: 'timesheetDate',
    status: { read: (t) => t.status, write: (t, value) => startIn(t, value as TimesheetStatus) },
    total_hours: 'totalHours',
    notes: 'notes',
    submitted_at: { read: (t) => iso(t.submittedAt) },
    locked_at: { read: (t) => iso(t.lockedAt) },
    processed_at: { read: (t) => iso(t.processedAt) },
    payroll_run_id: { read: (t) => idOf(t.payrollRun) },
    entries: {
      read: (t) => (t as Timesheet).entries.getItems().map(timesheetEntryRecord),
      write: (t, value, context) => writeEntries(t, value as TimesheetEntryChange[], context),
    },
  },
  naturalKey: {
    scope: 'employee',
    fields: ['timesheetDate'],
    exact: true,
    describe: (t) => `The employee already has a timesheet for ${t.timesheetDate} (one per employee per day)`,
    uniqueIndex: 'timesheets_employee_date_unique',
  },
  populate: ['employee'],
  wireRelations: ['entries', 'entries.workType', 'entries.workOrder'],
  beforeUpdate: assertEditable,
  events: {
    created: (timesheet, ctx) => ({ key: 'timesheet.created', payload: timesheetCreatedPayload(timesheet, ctx) }),
    updated: (timesheet, change, ctx) => timesheetUpdatedEvents(timesheet, change, ctx),
    deleted: (timesheet, ctx) => ({ key: 'timesheet.deleted', payload: timesheetDeletedPayload(timesheet, ctx) }),
  },
});

/** Deletes one entry of a timesheet (timesheet.updated, entry_deleted); 409 while the timesheet is locked or processed. */
export async function removeTimesheetEntry(em: EntityManager, actor: Actor, id: string, entryId: string): Promise<void> {
  await timesheets.modify(em, actor, id, async (_tx, timesheet) => {
    const entry = timesheet.entries.getItems().find((e) => e.id === entryId);
    if (!entry) throw ApiError.notFound('Timesheet entry', 'entry_id');
    // Orphan removal deletes the row.
    timesheet.entries.remove(entry);
  });
}
