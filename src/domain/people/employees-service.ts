import type { EntityClass, FilterQuery, RequiredEntityData } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../errors';
import { recordEvent } from '../../events/outbox';
import { employeeCreatedPayload } from '../../events/payloads/employee';
import type { Actor } from '../accounts/actor';
import { findIdIgnoringCase, lockNaturalKey } from '../natural-keys';
import { Department } from './department.entity';
import { Employee, type EmployeeType } from './employee.entity';
import { Role } from './role.entity';
import { findSkillsByName } from './skills-service';

export interface NewEmployee {
  empNumber: string;
  name: string;
  email: string;
  employeeType: EmployeeType;
  phone?: string;
  departmentName?: string;
  roleName?: string;
  skillNames?: string[];
  startDate?: string;
  emergencyContactName?: string;
  emergencyContactPhone?: string;
  emergencyContactRelationship?: string;
}

/** Finds a department or role by name (case-insensitively) or creates it, inside the caller's transaction. */
async function findOrCreateNamed<T extends Department | Role>(
  em: EntityManager,
  entity: EntityClass<T>,
  companyId: string,
  name: string,
): Promise<T> {
  const trimmed = name.trim();
  const table = em.getMetadata().get(entity.name).tableName;
  await lockNaturalKey(em, companyId, table, trimmed);
  const id = await findIdIgnoringCase(em, table, { company_id: companyId }, { name: trimmed });
  if (id) return em.findOneOrFail(entity, { id } as FilterQuery<T>);
  return em.create(entity, { company: companyId, name: trimmed } as unknown as RequiredEntityData<T>);
}

/**
 * Creates an employee with its event, in one transaction. Department and role are created when missing;
 * every skill must already be in the company's skill library, else nothing is written.
 */
export async function createEmployee(em: EntityManager, actor: Actor, input: NewEmployee, eventId?: string): Promise<Employee> {
  return em.transactional(async (tx) => {
    const { companyId } = actor;
    await lockNaturalKey(tx, companyId, 'employee', input.empNumber);
    if ((await tx.count(Employee, { company: companyId, empNumber: input.empNumber })) > 0) {
      throw ApiError.conflict('emp_number', `An employee with emp_number "${input.empNumber}" already exists`);
    }

    const requested = [...new Map((input.skillNames ?? []).map((n) => [n.trim().toLowerCase(), n.trim()])).values()];
    const skills = await findSkillsByName(tx, companyId, requested);
    const known = new Set(skills.map((s) => s.name.toLowerCase()));
    const missing = requested.filter((n) => !known.has(n.toLowerCase()));
    if (missing.length > 0) {
      throw new ApiError('UNKNOWN_SKILLS', `Unknown skills: ${missing.join(', ')}. Add them to the skill library first.`, {
        field: 'employee_skills',
        reason: `not in the company skill library: ${missing.join(', ')}`,
      });
    }

    const department = input.departmentName ? await findOrCreateNamed(tx, Department, companyId, input.departmentName) : null;
    const role = input.roleName ? await findOrCreateNamed(tx, Role, companyId, input.roleName) : null;
    const employee = tx.create(Employee, {
      company: companyId,
      empNumber: input.empNumber,
      name: input.name,
      email: input.email,
      employeeType: input.employeeType,
      phone: input.phone ?? null,
      department,
      role,
      startDate: input.startDate ?? null,
      emergencyContactName: input.emergencyContactName ?? null,
      emergencyContactPhone: input.emergencyContactPhone ?? null,
      emergencyContactRelationship: input.emergencyContactRelationship ?? null,
    });
    employee.skills.set(skills);
    const skillNames = skills.map((s) => s.name).sort((a, b) => a.localeCompare(b));
    recordEvent(tx, actor, 'employee.created', employeeCreatedPayload({ employee, department, role, skillNames }), eventId);
    return employee;
  });
}
