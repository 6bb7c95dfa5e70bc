import { isDeepStrictEqual } from 'node:util';
import type { ChangeContext, RecordedEvent } from '../records/record-service';
import type { TimeOff } from './time-off.entity';
import type { Timesheet } from './timesheet.entity';
import { timesheetEntryRecord } from './timesheet-entries';
import type {
  CatalogTimeOffCreatedData,
  CatalogTimesheetCreatedData,
  ChangesB,
  TimeOff as TimeOffRecord,
  Timesheet as TimesheetRecord,
  TimesheetEntry as TimesheetEntryRecord,
  TimesheetLockedData,
  TimesheetProcessedData,
  TimesheetsProcessedBatchData,
  TimesheetSubmittedData,
  TimesheetUnlockedData,
  TimesheetUpdatedData,
} from '../../generated/schemas';
import { changesBetween } from '../../events/changes';
import type { EventPayload } from '../../events/registry';
import { namedStamp, stamp } from '../event-format';

/*
 * Time off and timesheet events. Relations the builders read (the employee) must be loaded. `changes` of time
 * off map each changed field of the REST form to {from, to} in both shapes (webhooks.md 6).
 */

/** The fields 6.2 lists for every time_off event. */
const catalogTimeOffData = (request: TimeOff): CatalogTimeOffCreatedData => {
  const employee = request.employee.getEntity();
  return {
    id: request.id,
    emp_number: employee.empNumber,
    employee_name: employee.name,
    start_date: request.startDate,
    end_date: request.endDate,
    time_off_type: request.timeOffType,
    status: request.status,
    reason: request.reason,
    notes: request.notes,
  };
};

export const timeOffCreatedPayload = (request: TimeOff, ctx: ChangeContext): EventPayload<'time_off.created'> => {
  const { id, emp_number, employee_name, start_date, end_date, ...rest } = catalogTimeOffData(request);
  return {
    a: { id, emp_number, employee_name, start_date, end_date, start_time: request.startTime, end_time: request.endTime, ...rest, created_at: ctx.at.toISOString() },
    b: catalogTimeOffData(request),
  };
};

export const timeOffUpdatedPayload = (request: TimeOff, change: { before: TimeOffRecord; after: TimeOffRecord }, ctx: ChangeContext): EventPayload<'time_off.updated'> => {
  const { reason: _, ...withoutReason } = catalogTimeOffData(request);
  const changes = changesBetween(change.before, change.after, 'B');
  return {
    a: { ...withoutReason, updated_at: ctx.at.toISOString(), changes },
    b: { ...catalogTimeOffData(request), changes },
  };
};

export const timeOffDeletedPayload = (request: TimeOff, ctx: ChangeContext): EventPayload<'time_off.deleted'> => {
  const { id, emp_number, employee_name, start_date, end_date } = catalogTimeOffData(request);
  const deleted_at = ctx.at.toISOString();
  return {
    a: { id, emp_number, employee_name, start_date, end_date, deleted_at },
    b: { ...catalogTimeOffData(request), deleted_at },
  };
};

/** The employee a timesheet is of, as the timesheet events name them. */
const timesheetOf = (timesheet: Timesheet) => {
  const employee = timesheet.employee.getEntity();
  return { id: timesheet.id, timesheet_id: timesheet.id, emp_number: employee.empNumber, employee_name: employee.name, timesheet_date: timesheet.timesheetDate };
};

/** An entry in shape A's timesheet.updated: its work order named by number and title. */
const detailedEntry = (entry: TimesheetEntryRecord): NonNullable<TimesheetUpdatedData['entry']> => ({
  entry_id: entry.id,
  entry_date: entry.entry_date,
  work_order_id: entry.work_order_id,
  work_order_name: entry.work_order_number && `${entry.work_order_number} ${entry.work_order_title}`,
  work_type_id: entry.work_type_id,
  work_type_name: entry.work_type_name,
  hours: entry.hours,
  notes: entry.notes,
});

/** An entry in shape B: the entry format of webhooks.md 2.8. */
const catalogEntry = (entry: TimesheetEntryRecord): CatalogTimesheetCreatedData['entries'][number] => ({
  entry_date: entry.entry_date,
  hours: entry.hours,
  work_order_number: entry.work_order_number,
  work_type_code: entry.work_type_code,
  work_type_name: entry.work_type_name,
  start_time: entry.start_time,
  end_time: entry.end_time,
  notes: entry.notes,
});

export function timesheetCreatedPayload(timesheet: Timesheet, ctx: ChangeContext): EventPayload<'timesheet.created'> {
  const entries = timesheet.entries.getItems().map(timesheetEntryRecord);
  const { employee_name: _, timesheet_id: __, ...catalog } = timesheetOf(timesheet);
  return {
    a: { ...timesheetOf(timesheet), status: timesheet.status, entry_count: entries.length, created_at: ctx.at.toISOString() },
    b: { ...catalog, status: timesheet.status, total_hours: timesheet.totalHours, entries: entries.map(catalogEntry) },
  };
}

/** The timesheet's own fields whose change is a notes_updated. */
const OWN_FIELDS = ['notes', 'total_hours'] as const;

/**
 * timesheet.updated, once per change (6.1 carries one update_type and one entry): one per entry added, changed
 * or deleted, then notes_updated when the timesheet's notes or total_hours changed. Shape B's `changes` say
 * the same: `entries` as {added, removed} (a changed entry is removed as it was and added as it is), or the
 * own fields as {from, to}.
 */
export function timesheetUpdatedEvents(timesheet: Timesheet, change: { before: TimesheetRecord; after: TimesheetRecord }, ctx: ChangeContext): RecordedEvent[] {
  const { before, after } = change;
  const was = new Map(before.entries.map((e) => [e.id, e]));
  const now = new Map(after.entries.map((e) => [e.id, e]));
  const { employee_name: _, timesheet_id: __, ...identity } = timesheetOf(timesheet);
  const event = (updateType: TimesheetUpdatedData['update_type'], entry: TimesheetEntryRecord | null, changes: ChangesB): RecordedEvent => ({
    key: 'timesheet.updated',
    payload: {
      a: { timesheet_id: timesheet.id, update_type: updateType, updated_at: ctx.at.toISOString(), entry: entry && detailedEntry(entry) },
      b: { ...identity, status: timesheet.status, total_hours: timesheet.totalHours, notes: timesheet.notes, changes },
    },
  });
  const events: RecordedEvent[] = [];
  for (const entry of after.entries) {
    const old = was.get(entry.id);
    if (!old) events.push(event('entry_added', entry, { entries: { added: [catalogEntry(entry)], removed: [] } }));
    else if (!isDeepStrictEqual(old, entry)) events.push(event('entry_updated', entry, { entries: { added: [catalogEntry(entry)], removed: [catalogEntry(old)] } }));
  }
  for (const entry of before.entries) {
    if (!now.has(entry.id)) events.push(event('entry_deleted', entry, { entries: { added: [], removed: [catalogEntry(entry)] } }));
  }
  const pick = (record: TimesheetRecord) => Object.fromEntries(OWN_FIELDS.map((f) => [f, record[f]]));
  const own = changesBetween(pick(before), pick(after), 'B');
  if (Object.keys(own).length) events.push(event('notes_updated', null, own));
  return events;
}

/** timesheet.deleted (6.2 only): the timesheet's ISO week, Monday to Sunday, as week_start and week_end. */
export function timesheetDeletedPayload(timesheet: Timesheet, ctx: ChangeContext): EventPayload<'timesheet.deleted'> {
  const day = new Date(`${timesheet.timesheetDate}T00:00:00Z`);
  const monday = new Date(day.getTime() - ((day.getUTCDay() + 6) % 7) * 86_400_000);
  const sunday = new Date(monday.getTime() + 6 * 86_400_000);
  return {
    b: {
      id: timesheet.id,
      emp_number: timesheet.employee.getEntity().empNumber,
      week_start: monday.toISOString().slice(0, 10),
      week_end: sunday.toISOString().slice(0, 10),
      deleted_by: ctx.actor.apiKeyId,
      reason: null,
    },
  };
}

/** Who made a lifecycle change, as the events name them: the API key's id and name. */
export interface LifecycleActor {
  by: string;
  byName: string;
  at: Date;
}

export const timesheetSubmittedData = (timesheet: Timesheet, who: LifecycleActor): TimesheetSubmittedData => ({
  ...timesheetOf(timesheet),
  total_hours: timesheet.totalHours,
  submitted_at: who.at.toISOString(),
  entries: timesheet.entries.getItems().map((e) => {
    const { entry_date, work_order_id, work_order_name, hours, notes } = detailedEntry(timesheetEntryRecord(e));
    return { entry_date, work_order_id, work_order_name, hours, notes };
  }),
});

export const timesheetLockedData = (timesheet: Timesheet, who: LifecycleActor): TimesheetLockedData => ({
  ...timesheetOf(timesheet),
  total_hours: timesheet.totalHours,
  ...stamp('locked', who.at, who.by),
  locked_by_name: who.byName,
});

export const timesheetUnlockedData = (timesheet: Timesheet, who: LifecycleActor): TimesheetUnlockedData => ({
  ...timesheetOf(timesheet),
  ...namedStamp('unlocked', who),
});

export const timesheetProcessedData = (timesheet: Timesheet, who: LifecycleActor): TimesheetProcessedData => ({
  ...timesheetOf(timesheet),
  total_hours: timesheet.totalHours,
  ...namedStamp('processed', who),
});

/** timesheets.processed.batch: the timesheets a payroll run processed. */
export const timesheetsProcessedBatchData = (timesheets: Timesheet[], who: LifecycleActor): TimesheetsProcessedBatchData => ({
  timesheets: timesheets.map((t) => ({ ...timesheetOf(t), total_hours: t.totalHours })),
  ...namedStamp('processed', who),
  total_count: timesheets.length,
});
