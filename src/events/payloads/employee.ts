import type { Department } from '../../domain/people/department.entity';
import type { Employee } from '../../domain/people/employee.entity';
import type { Role } from '../../domain/people/role.entity';
import type { EventPayload } from '../registry';

export interface EmployeeSnapshot {
  employee: Employee;
  department: Department | null;
  role: Role | null;
  skillNames: string[];
}

/** employee.created (6.1 and 6.2 list the same fields apart from the role flags). */
export function employeeCreatedPayload({ employee, department, role, skillNames }: EmployeeSnapshot): EventPayload<'employee.created'> {
  const common = {
    id: employee.id,
    emp_number: employee.empNumber,
    name: employee.name,
    email: employee.email,
    phone: employee.phone,
    department: department?.name ?? null,
    role: role?.name ?? null,
    employee_type: employee.employeeType,
    employee_skills: skillNames,
    start_date: employee.startDate,
    emergency_contact_name: employee.emergencyContactName,
    emergency_contact_phone: employee.emergencyContactPhone,
  };
  return {
    a: {
      ...common,
      is_project_owner: employee.employeeType === 'project_owner',
      is_site_lead: employee.employeeType === 'site_lead',
      is_site_worker: employee.employeeType === 'site_worker',
      created_at: employee.createdAt.toISOString(),
      updated_at: employee.updatedAt.toISOString(),
    },
    b: common,
  };
}
