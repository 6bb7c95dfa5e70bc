import type { EntityManager } from '@mikro-orm/postgresql';
import { customers } from '../../../domain/business/customers';
import { locations } from '../../../domain/business/locations';
import { employees } from '../../../domain/people/employees';
import { ApiError } from '../../../errors';

/*
 * Inbound operations name related records by natural key; the services take ids. A name that matches
 * nothing is a 400 naming the field (as an unknown id is on REST).
 */

export async function customerIdByName(em: EntityManager, companyId: string, name: string, field = 'customer_name'): Promise<string> {
  const id = await customers.findIdByKey(em, companyId, [name]);
  if (!id) throw ApiError.invalid(field, `does not match a customer of your company ("${name}")`);
  return id;
}

/** The location of the customer with this name; null and undefined pass through (clear, or leave as is). */
export async function locationIdByName<T extends string | null | undefined>(
  em: EntityManager,
  companyId: string,
  customerId: string,
  name: T,
  field = 'location_name',
): Promise<string | Exclude<T, string>> {
  if (typeof name !== 'string') return name as Exclude<T, string>;
  const id = await locations.findIdByKey(em, companyId, [name], customerId);
  if (!id) throw ApiError.invalid(field, `does not match a location of the customer ("${name}")`);
  return id;
}

/** The employee with this number (ignoring case, as every natural key); null and undefined pass through. */
export async function employeeIdByNumber<T extends string | null | undefined>(
  em: EntityManager,
  companyId: string,
  empNumber: T,
  field: string,
): Promise<string | Exclude<T, string>> {
  if (typeof empNumber !== 'string') return empNumber as Exclude<T, string>;
  const id = await employees.findIdByKey(em, companyId, [empNumber]);
  if (!id) throw ApiError.invalid(field, `does not match an employee (emp_number "${empNumber}")`);
  return id;
}
