import type { TimeOffCreate, TimeOff as TimeOffRecord, TimeOffUpdate } from '../../generated/schemas';
import { timeOffCreatedPayload, timeOffDeletedPayload, timeOffUpdatedPayload } from './time-events';
import { ApiError } from '../../errors';
import { Employee } from '../people/employee.entity';
import { RecordService } from '../records/record-service';
import { TimeOff } from './time-off.entity';

/**
 * Time off (webhooks.md 2.7): vacation and approved unless said otherwise; full days, or a partial day with
 * start_time and end_time. An employee's request is identified by its start and end dates.
 */
export const timeOff = new RecordService<TimeOff, TimeOffRecord, TimeOffCreate, TimeOffUpdate>({
  entity: TimeOff,
  label: 'Time off',
  wire: {
    employee_id: { relation: 'employee', target: Employee, label: 'an employee' },
    start_date: 'startDate',
    end_date: 'endDate',
    start_time: 'startTime',
    end_time: 'endTime',
    time_off_type: 'timeOffType',
    status: 'status',
    reason: 'reason',
    notes: 'notes',
  },
  naturalKey: {
    scope: 'employee',
    fields: ['startDate', 'endDate'],
    exact: true,
    describe: (t) => `The employee already has time off from ${t.startDate} to ${t.endDate}`,
    uniqueIndex: 'time_off_employee_dates_unique',
  },
  populate: ['employee'],
  async check(_em, request) {
    if (request.endDate < request.startDate) throw ApiError.invalid('end_date', `must not be before start_date (${request.startDate})`);
    if ((request.startTime === null) !== (request.endTime === null)) {
      const missing = request.startTime === null ? 'start_time' : 'end_time';
      throw ApiError.invalid(missing, 'is required for a partial day (start_time and end_time go together; both null for full days)');
    }
    if (request.startTime !== null && request.startDate === request.endDate && request.endTime! <= request.startTime) {
      throw ApiError.invalid('end_time', `must be after start_time (${request.startTime}) on a single day`);
    }
  },
  events: {
    created: (request, ctx) => ({ key: 'time_off.created', payload: timeOffCreatedPayload(request, ctx) }),
    updated: (request, change, ctx) => ({ key: 'time_off.updated', payload: timeOffUpdatedPayload(request, change, ctx) }),
    deleted: (request, ctx) => ({ key: 'time_off.deleted', payload: timeOffDeletedPayload(request, ctx) }),
  },
});
