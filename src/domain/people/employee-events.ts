import type { Employee } from './employee.entity';
import type { ChangeContext } from '../records/record-service';
import type {
  CatalogEmployeeCreatedData,
  CatalogEmployeeUpdatedData,
  Employee as EmployeeRecord,
  EmployeeCreatedData,
  EmployeeDeletedData,
} from '../../generated/schemas';
import { changesBetween } from '../../events/changes';
import type { EventPayload } from '../../events/registry';

/** `changes` of employee.updated: each changed field of the REST form; skills as a set ({added, removed}). */
export const EMPLOYEE_SET_FIELDS = ['employee_skills'];

/** The employee's skill names, alphabetical (department, role and skills must be loaded). */
export const skillNamesOf = (employee: Employee): string[] =>
  employee.skills
    .getItems()
    .map((s) => s.name)
    .sort((a, b) => a.localeCompare(b));

/** The fields 6.1 and 6.2 both list for employee.created and employee.updated. */
const catalogEmployeeData = (employee: Employee): CatalogEmployeeCreatedData => ({
  id: employee.id,
  emp_number: employee.empNumber,
  name: employee.name,
  email: employee.email,
  phone: employee.phone,
  department: employee.department?.getEntity().name ?? null,
  role: employee.role?.getEntity().name ?? null,
  employee_type: employee.employeeType,
  employee_skills: skillNamesOf(employee),
  start_date: employee.startDate,
  emergency_contact_name: employee.emergencyContactName,
  emergency_contact_phone: employee.emergencyContactPhone,
});

/** Shape A: the complete record with the role flags (6.1), for created and updated alike. */
const employeeData = (employee: Employee): EmployeeCreatedData => ({
  ...catalogEmployeeData(employee),
  is_project_owner: employee.employeeType === 'project_owner',
  is_site_lead: employee.employeeType === 'site_lead',
  is_site_worker: employee.employeeType === 'site_worker',
  created_at: employee.createdAt.toISOString(),
  updated_at: employee.updatedAt.toISOString(),
});

export const employeeCreatedPayload = (employee: Employee): EventPayload<'employee.created'> => ({
  a: employeeData(employee),
  b: catalogEmployeeData(employee),
});

export const employeeUpdatedPayload = (employee: Employee, change: { before: EmployeeRecord; after: EmployeeRecord }): EventPayload<'employee.updated'> => ({
  a: employeeData(employee),
  b: { ...catalogEmployeeData(employee), changes: changesBetween(change.before, change.after, 'B', EMPLOYEE_SET_FIELDS) } satisfies CatalogEmployeeUpdatedData,
});

export function employeeDeletedPayload(employee: Employee, ctx: ChangeContext): EventPayload<'employee.deleted'> {
  const data: EmployeeDeletedData = { id: employee.id, emp_number: employee.empNumber, name: employee.name, email: employee.email, deleted_at: ctx.at.toISOString() };
  return { a: data, b: data };
}
