import type { EmployeeType } from '../../../../domain/people/employee.entity';
import { createEmployee } from '../../../../domain/people/employees-service';
import { defineOperation } from '../operation';

/** webhooks.md 2.4 (schemas/inbound/employee.created.json). */
interface EmployeeCreatedData {
  emp_number: string;
  name: string;
  email: string;
  employee_type: EmployeeType;
  phone?: string;
  department_name?: string;
  role_name?: string;
  employee_skills?: string[];
  start_date?: string;
  emergency_contact_name?: string;
  emergency_contact_phone?: string;
  emergency_contact_relationship?: string;
}

export const employeeCreated = defineOperation<EmployeeCreatedData>({
  eventType: 'employee.created',
  async handle({ data, actor, em, eventId }) {
    const employee = await createEmployee(
      em,
      actor,
      {
        empNumber: data.emp_number,
        name: data.name,
        email: data.email,
        employeeType: data.employee_type,
        phone: data.phone,
        departmentName: data.department_name,
        roleName: data.role_name,
        skillNames: data.employee_skills,
        startDate: data.start_date,
        emergencyContactName: data.emergency_contact_name,
        emergencyContactPhone: data.emergency_contact_phone,
        emergencyContactRelationship: data.emergency_contact_relationship,
      },
      eventId,
    );
    return { message: `Employee ${employee.empNumber} created`, recordId: employee.id };
  },
});
