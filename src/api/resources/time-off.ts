import { TIME_OFF_STATUSES, TIME_OFF_TYPES } from '../../domain/time/time-off.entity';
import { timeOff } from '../../domain/time/time-off';
import { byDate, byId, byValue } from './filters';
import { defineResource } from './resource';

export const timeOffResource = defineResource({
  collection: 'time-off',
  label: 'Time off',
  plural: 'time off requests',
  description:
    'Time off of employees: vacation and approved unless said otherwise; full days, or a partial day with start_time and end_time. ' +
    'An employee has one request per start_date and end_date. Deleting a request cancels it.',
  schema: 'rest/time-off.json',
  service: timeOff,
  filters: [
    byId('employee_id', 'employee', 'Time off of this employee.'),
    byValue('status', 'status', TIME_OFF_STATUSES, 'Time off in this status.'),
    byValue('time_off_type', 'timeOffType', TIME_OFF_TYPES, 'Time off of this type.'),
    byDate('date_from', 'Time off that lasts until this date or later (with date_to: that overlaps the range).', (date) => ({ endDate: { $gte: date } })),
    byDate('date_to', 'Time off that starts on this date or earlier (with date_from: that overlaps the range).', (date) => ({ startDate: { $lte: date } })),
  ],
});
