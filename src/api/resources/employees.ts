import { EMPLOYEE_TYPES } from '../../domain/people/employee.entity';
import { employees } from '../../domain/people/employees';
import { bySomeText, byText, byValue } from './filters';
import { defineResource } from './resource';

export const employeesResource = defineResource({
  collection: 'employees',
  label: 'Employee',
  plural: 'employees',
  description:
    'People of the company, with the rules of the inbound employee operations: departments and roles are created when missing, ' +
    'skills must be in the skill library (else 400 UNKNOWN_SKILLS). Deleting an employee cancels their time off; one with timesheets cannot be deleted (409).',
  schema: 'rest/employees.json',
  service: employees,
  filters: [
    byText('department', 'department.name', 'Employees of this department (its name, ignoring case).'),
    byText('role', 'role.name', 'Employees with this role (its name, ignoring case).'),
    byValue('employee_type', 'employeeType', EMPLOYEE_TYPES, 'Employees of this type.'),
    bySomeText('skill', 'skills', 'name', 'Employees with this skill (its name, ignoring case).'),
  ],
});
