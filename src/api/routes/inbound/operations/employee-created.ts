import { createEmployee } from '../../../../domain/people/employees-service';
import type { EmployeeCreatedInput } from '../../../../generated/schemas';
import { defineOperation } from '../operation';

export const employeeCreated = defineOperation<EmployeeCreatedInput>({
  eventType: 'employee.created',
  schema: 'inbound/employee.created.json',
  summary: 'Creates an employee; department and role are created when missing, every skill must be in the skill library.',
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
