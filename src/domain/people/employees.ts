import { type EntityClass, type FilterQuery, ref, type RequiredEntityData } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { EmployeeCreate, Employee as EmployeeRecord, EmployeeUpdate } from '../../generated/schemas';
import { ApiError } from '../../errors';
import { EMPLOYEE_SET_FIELDS, employeeCreatedPayload, employeeDeletedPayload, employeeUpdatedPayload, skillNamesOf } from './employee-events';
import { findIdIgnoringCase, lockNaturalKey } from '../natural-keys';
import { RecordService } from '../records/record-service';
import type { FieldMapping } from '../records/wire-mapping';
import { TimeOff } from '../time/time-off.entity';
import { timeOff } from '../time/time-off';
import { Timesheet } from '../time/timesheet.entity';
import { Department } from './department.entity';
import { Employee } from './employee.entity';
import { Role } from './role.entity';
import { findSkillsByName } from './skills-service';

/** Finds a department or role by name (case-insensitively) or creates it, inside the caller's transaction. */
async function findOrCreateNamed<T extends Department | Role>(em: EntityManager, entity: EntityClass<T>, companyId: string, name: string): Promise<T> {
  const table = em.getMetadata().get(entity.name).tableName;
  await lockNaturalKey(em, companyId, table, name);
  const id = await findIdIgnoringCase(em, table, { company_id: companyId }, { name });
  if (id) return em.findOneOrFail(entity, { id } as FilterQuery<T>);
  return em.create(entity, { company: companyId, name } as unknown as RequiredEntityData<T>);
}

/** department_name / role_name: the group's name on the wire; created on first use, matched ignoring case. */
function groupField(entity: typeof Department | typeof Role, relation: 'department' | 'role'): FieldMapping<Employee> {
  return {
    read: (view) => (view as Employee)[relation]?.getEntity().name ?? null,
    async write(employee, value, { em, companyId }) {
      employee[relation] = value === null ? null : (ref(await findOrCreateNamed(em, entity, companyId, value as string)) as never);
    },
  };
}

/** employee_skills: names of the skill library's entries; every name must be there, else nothing is written. */
const skillsField: FieldMapping<Employee> = {
  read: (view) => skillNamesOf(view as Employee),
  async write(employee, value, { em, companyId, field }) {
    const requested = [...new Map((value as string[]).map((n) => [n.trim().toLowerCase(), n.trim()])).values()];
    const skills = await findSkillsByName(em, companyId, requested);
    const known = new Set(skills.map((s) => s.name.toLowerCase()));
    const missing = requested.filter((n) => !known.has(n.toLowerCase()));
    if (missing.length > 0) {
      throw new ApiError('UNKNOWN_SKILLS', `Unknown skills: ${missing.join(', ')}. Add them to the skill library first.`, {
        field,
        reason: `not in the company skill library: ${missing.join(', ')}`,
      });
    }
    employee.skills.set(skills);
  },
};

/**
 * Employees (webhooks.md 2.4), identified by emp_number. The same rules on REST and inbound: department and
 * role are created when missing, every skill must be in the library. Deleting one cancels their time off
 * (each with time_off.deleted); one with timesheets is kept (409): payroll history stays whole.
 */
export const employees = new RecordService<Employee, EmployeeRecord, EmployeeCreate, EmployeeUpdate>({
  entity: Employee,
  label: 'Employee',
  wire: {
    emp_number: 'empNumber',
    name: 'name',
    email: 'email',
    phone: 'phone',
    department_name: groupField(Department, 'department'),
    role_name: groupField(Role, 'role'),
    employee_type: 'employeeType',
    employee_skills: skillsField,
    start_date: 'startDate',
    emergency_contact_name: 'emergencyContactName',
    emergency_contact_phone: 'emergencyContactPhone',
    emergency_contact_relationship: 'emergencyContactRelationship',
  },
  naturalKey: { scope: null, fields: ['empNumber'], describe: (e) => `An employee with emp_number "${e.empNumber}" already exists`, uniqueIndex: 'employees_company_emp_number_unique' },
  setFields: EMPLOYEE_SET_FIELDS,
  wireRelations: ['department', 'role', 'skills'],
  events: {
    created: (employee) => ({ key: 'employee.created', payload: employeeCreatedPayload(employee) }),
    updated: (employee, change) => ({ key: 'employee.updated', payload: employeeUpdatedPayload(employee, change) }),
    deleted: (employee, ctx) => ({ key: 'employee.deleted', payload: employeeDeletedPayload(employee, ctx) }),
  },
  async beforeDelete(em, employee, ctx) {
    const timesheets = await em.count(Timesheet, { employee });
    if (timesheets > 0) {
      throw new ApiError('CONFLICT', `Employee ${employee.empNumber} has ${timesheets} timesheet(s); payroll history is kept, so the employee cannot be deleted`, {
        field: null,
        reason: `has ${timesheets} timesheet(s)`,
      });
    }
    for (const request of await em.find(TimeOff, { employee }, { orderBy: { createdAt: 'asc', id: 'asc' } })) {
      await timeOff.remove(em, ctx.actor, request.id);
    }
  },
});

/** 400 naming `field` unless `id` (when given) is an employee of the company. */
export async function assertEmployee(em: EntityManager, companyId: string, id: string | null, field: string): Promise<void> {
  if (id !== null && (await em.count(Employee, { id, company: companyId })) === 0) throw ApiError.invalid(field, 'does not match an employee of your company');
}
