import { employees } from '../../../../domain/people/employees';
import type { EmployeeCreatedInput, EmployeeDeletedInput, EmployeeUpdatedInput } from '../../../../generated/schemas';
import { crudOperations, without } from '../crud-operations';

/** employee.created / updated / deleted: identified by emp_number (webhooks.md 2.4); the REST fields, same rules. */
export const employeeOperations = crudOperations({
  record: 'employee',
  schema: 'inbound/employee.json',
  service: employees,
  keyField: 'emp_number',
  describe: (data: EmployeeUpdatedInput | EmployeeDeletedInput) => `Employee ${data.emp_number}`,
  describeNew: (data: EmployeeCreatedInput) => `Employee ${data.emp_number}`,
  find: (em, companyId, data) => employees.findIdByKey(em, companyId, [data.emp_number]),
  toCreate: async (_em, _companyId, data: EmployeeCreatedInput) => data,
  toUpdate: async (_em, _companyId, data: EmployeeUpdatedInput) => without(data, 'emp_number'),
});
