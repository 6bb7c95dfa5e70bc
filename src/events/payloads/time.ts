import type { ChangeContext } from '../../domain/records/record-service';
import type { TimeOff } from '../../domain/time/time-off.entity';
import type { CatalogTimeOffCreatedData, TimeOff as TimeOffRecord } from '../../generated/schemas';
import { changesBetween } from '../changes';
import type { EventPayload } from '../registry';

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

