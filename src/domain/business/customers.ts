import type { CustomerCreate, Customer as CustomerRecord, CustomerUpdate } from '../../generated/schemas';
import { customerCreatedData, customerDeletedData, customerUpdatedData } from './business-events';
import { ApiError } from '../../errors';
import { Employee } from '../people/employee.entity';
import { RecordService } from '../records/record-service';
import { Project } from '../work/project.entity';
import { contacts } from './contacts';
import { Contact } from './contact.entity';
import { Customer } from './customer.entity';
import { Location } from './location.entity';
import { locations } from './locations';

/**
 * Customers (webhooks.md 2.6). Deleting one that still has projects is refused (409); its locations and
 * contacts are deleted with it, each with its own deleted event.
 */
export const customers = new RecordService<Customer, CustomerRecord, CustomerCreate, CustomerUpdate>({
  entity: Customer,
  label: 'Customer',
  wire: {
    name: 'name',
    type: 'type',
    email: 'email',
    phone: 'phone',
    website: 'website',
    status: 'status',
    notes: 'notes',
    billing_address: {
      nested: {
        address_line_1: 'billingAddress.line1',
        address_line_2: 'billingAddress.line2',
        city: 'billingAddress.city',
        province: 'billingAddress.province',
        postal_code: 'billingAddress.postalCode',
        country: 'billingAddress.country',
      },
    },
    account_manager_id: { relation: 'accountManager', target: Employee, label: 'an employee' },
  },
  naturalKey: { scope: null, fields: ['name'], describe: (c) => `A customer named "${c.name}" already exists`, uniqueIndex: 'customers_company_name_unique' },
  events: {
    created: (customer, ctx) => ({ key: 'customer.created', payload: { a: customerCreatedData(customer, ctx) } }),
    updated: (customer, _change, ctx) => ({ key: 'customer.updated', payload: { a: customerUpdatedData(customer, ctx) } }),
    deleted: (customer, ctx) => ({ key: 'customer.deleted', payload: { a: customerDeletedData(customer, ctx) } }),
  },
  async beforeDelete(em, customer, ctx) {
    const projects = await em.count(Project, { customer });
    if (projects > 0) {
      throw new ApiError('CONFLICT', `Customer "${customer.name}" still has ${projects} project(s); delete them first`, {
        field: null,
        reason: `has ${projects} project(s)`,
      });
    }
    for (const contact of await em.find(Contact, { customer }, { orderBy: { createdAt: 'asc', id: 'asc' } })) {
      await contacts.remove(em, ctx.actor, contact.id);
    }
    for (const location of await em.find(Location, { customer }, { orderBy: { createdAt: 'asc', id: 'asc' } })) {
      await locations.remove(em, ctx.actor, location.id);
    }
  },
});
