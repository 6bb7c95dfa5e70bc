import type { EntityManager } from '@mikro-orm/postgresql';
import { employees } from '../../../../domain/people/employees';
import { timeOff } from '../../../../domain/time/time-off';
import type { TimeOffCreatedInput, TimeOffDeletedInput, TimeOffUpdatedInput } from '../../../../generated/schemas';
import { crudOperations, without } from '../crud-operations';
import { employeeIdByNumber } from '../references';

const period = (data: { start_date: string; end_date: string }) => (data.start_date === data.end_date ? `on ${data.start_date}` : `from ${data.start_date} to ${data.end_date}`);

/** time_off.created / updated / deleted: identified by emp_number with the request's start_date and end_date; deleting cancels. */
export const timeOffOperations = crudOperations({
  record: 'time_off',
  schema: 'inbound/time_off.json',
  service: timeOff,
  keyField: 'start_date',
  describe: (data: TimeOffUpdatedInput | TimeOffDeletedInput) => `Time off of employee ${data.emp_number} ${period(data)}`,
  describeNew: (data: TimeOffCreatedInput) => `Time off of employee ${data.emp_number} ${period(data)}`,
  messages: {
    created: (data: TimeOffCreatedInput, record) => `Time off request processed: ${record.time_off_type} for employee ${data.emp_number} ${period(data)}, ${record.status}`,
    deleted: (data) => `Time off of employee ${data.emp_number} ${period(data)} cancelled`,
  },
  async find(em: EntityManager, companyId, data) {
    const employeeId = await employees.findIdByKey(em, companyId, [data.emp_number]);
    return employeeId && timeOff.findIdByKey(em, companyId, [data.start_date, data.end_date], employeeId);
  },
  toCreate: async (em, companyId, data: TimeOffCreatedInput) => ({
    ...without(data, 'emp_number'),
    employee_id: await employeeIdByNumber(em, companyId, data.emp_number, 'emp_number'),
  }),
  // The dates identify the request; the other fields change.
  toUpdate: async (_em, _companyId, data: TimeOffUpdatedInput) => without(data, 'emp_number', 'start_date', 'end_date'),
});
