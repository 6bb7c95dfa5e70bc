import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../errors';
import { employees } from './employees';

/** Maps employee numbers (by the field that names them, ignoring case) to employee ids; unknown numbers are a 400. */
export async function resolveEmployeeNumbers(
  em: EntityManager,
  companyId: string,
  byField: Record<string, string | undefined>,
): Promise<Record<string, string | null>> {
  const resolved: Record<string, string | null> = {};
  for (const [field, number] of Object.entries(byField)) {
    if (!number) {
      resolved[field] = null;
      continue;
    }
    const id = await employees.findIdByKey(em, companyId, [number]);
    if (!id) throw ApiError.invalid(field, `does not match an employee (emp_number "${number}")`);
    resolved[field] = id;
  }
  return resolved;
}
