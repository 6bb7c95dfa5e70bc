import { employees } from '../../../../domain/people/employees';
import { updateTimesheet } from '../../../../domain/time/timesheet-lifecycle';
import { timesheets } from '../../../../domain/time/timesheets';
import type { TimesheetCreatedInput, TimesheetDeletedInput, TimesheetUpdatedInput } from '../../../../generated/schemas';
import { crudOperations, without } from '../crud-operations';
import { employeeIdByNumber } from '../references';

/**
 * timesheet.created / updated / deleted: identified by emp_number with timesheet_date. An update's status goes
 * through the lifecycle (updateTimesheet), as the REST actions do.
 */
export const timesheetOperations = crudOperations({
  record: 'timesheet',
  schema: 'inbound/timesheet.json',
  service: { label: timesheets.label, create: timesheets.create.bind(timesheets), change: updateTimesheet, remove: timesheets.remove.bind(timesheets) },
  keyField: 'timesheet_date',
  describe: (data: TimesheetUpdatedInput | TimesheetDeletedInput) => `Timesheet of employee ${data.emp_number} for ${data.timesheet_date}`,
  describeNew: (data: TimesheetCreatedInput) => `Timesheet of employee ${data.emp_number} for ${data.timesheet_date}`,
  async find(em, companyId, data) {
    const employeeId = await employees.findIdByKey(em, companyId, [data.emp_number]);
    return employeeId && timesheets.findIdByKey(em, companyId, [data.timesheet_date], employeeId);
  },
  toCreate: async (em, companyId, data: TimesheetCreatedInput) => ({
    ...without(data, 'emp_number'),
    employee_id: await employeeIdByNumber(em, companyId, data.emp_number, 'emp_number'),
  }),
  toUpdate: async (_em, _companyId, data: TimesheetUpdatedInput) => without(data, 'emp_number', 'timesheet_date'),
});
