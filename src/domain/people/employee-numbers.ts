import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../errors';
import { Employee } from './employee.entity';

/** Maps employee numbers (by the field that names them) to employee ids; unknown numbers are a 400. */
export async function resolveEmployeeNumbers(
  em: EntityManager,
  companyId: string,
  byField: Record<string, string | undefined>,
): Promise<Record<string, string | null>> {
  const wanted = [...new Set(Object.values(byField).filter((n): n is string => !!n))];
  const found = wanted.length ? await em.find(Employee, { company: companyId, empNumber: { $in: wanted } }) : [];
  const idByNumber = new Map(found.map((e) => [e.empNumber, e.id]));
  const resolved: Record<string, string | null> = {};
  for (const [field, number] of Object.entries(byField)) {
    if (number && !idByNumber.has(number)) {
      throw ApiError.invalid(field, `does not match an employee (emp_number "${number}")`);
    }
    resolved[field] = number ? idByNumber.get(number)! : null;
  }
  return resolved;
}
