import { v7 } from 'uuid';
import type { Actor } from '../../src/domain/accounts/actor';
import { customers } from '../../src/domain/business/customers';
import { locations } from '../../src/domain/business/locations';
import { employees } from '../../src/domain/people/employees';
import { createProject } from '../../src/domain/work/projects';
import type { EmployeeCreate } from '../../src/generated/schemas';
import type { Tenant, TestStack } from './stack';

export const actorOf = (tenant: Tenant): Actor => ({ companyId: tenant.companyId, apiKeyId: tenant.apiKeyId });

/** A customer, location and project written through the domain layer (no workflow involved). */
export async function seedProject(stack: TestStack, tenant: Tenant, projectCode = `P-${v7().slice(-8)}`): Promise<string> {
  const actor = actorOf(tenant);
  const { record: customer } = await customers.findOrCreate(stack.em(), actor, { name: 'Seed Customer' });
  const { record: location } = await locations.findOrCreate(stack.em(), actor, { customer_id: customer.id, name: 'Seed Site', city: 'Calgary' });
  const projectId = v7();
  await createProject(
    stack.em(),
    actor,
    { projectId, project: { project_code: projectCode, name: `Project ${projectCode}`, customer_id: customer.id, location_id: location.id } },
    v7(),
  );
  return projectId;
}

export async function seedEmployee(
  stack: TestStack,
  tenant: Tenant,
  overrides: { empNumber?: string; name?: string; employeeType?: EmployeeCreate['employee_type'] } = {},
): Promise<string> {
  const employee = await employees.create(stack.em(), actorOf(tenant), {
    emp_number: overrides.empNumber ?? `E-${v7().slice(-8)}`,
    name: overrides.name ?? 'Sam Seed',
    email: 'sam@example.com',
    employee_type: overrides.employeeType ?? 'site_worker',
  });
  return employee.id;
}

/** Outbox rows of a company, oldest first. */
export async function outboxOf(stack: TestStack, companyId: string) {
  return stack.em().execute<{ id: string; event_type: string; data: Record<string, any>; catalog_data: Record<string, any> | null; origin_api_key_id: string }[]>(
    'select id, event_type, data, catalog_data, origin_api_key_id from outbox_events where company_id = ? order by created_at, id',
    [companyId],
  );
}

export async function countRows(stack: TestStack, table: string, companyId: string): Promise<number> {
  const [row] = await stack.em().execute<{ n: string }[]>(`select count(*) as n from "${table}" where company_id = ?`, [companyId]);
  return Number(row!.n);
}

/** project.created data with every section filled in. */
export const projectData = (code: string, overrides: Record<string, unknown> = {}) => ({
  project_code: code,
  project_name: `Tower ${code}`,
  description: 'Twelve-storey residential tower',
  customer_name: 'Northwind Developments',
  customer_type: 'commercial',
  customer_email: 'ops@northwind.example',
  customer_phone: '+1 403 555 0199',
  location_name: 'Riverside Lot 7',
  location_address_line_1: '700 Riverside Dr',
  location_city: 'Calgary',
  location_province: 'AB',
  location_postal_code: 'T2P 1A1',
  location_country: 'CA',
  contacts: [
    { first_name: 'Morgan', last_name: 'Lee', title: 'Site Manager', email: 'morgan@northwind.example', is_primary: true },
    { first_name: 'Riley', last_name: 'Chen', title: 'Architect', contact_tags: ['design'] },
  ],
  priority: 'high',
  start_date: '2026-04-01',
  end_date: '2027-06-30',
  equipment: ['crane'],
  custom_fields: { permit: 'BP-2026-0042' },
  docs: [{ name: 'Drawings', url: 'https://files.example/drawings.pdf' }],
  ...overrides,
});

/** How many of the rows project.created makes exist for the company. */
export async function projectCounts(stack: TestStack, companyId: string) {
  return {
    customers: await countRows(stack, 'customers', companyId),
    locations: await countRows(stack, 'locations', companyId),
    contacts: await countRows(stack, 'contacts', companyId),
    projects: await countRows(stack, 'projects', companyId),
  };
}
