import { customers } from '../../../../domain/business/customers';
import type { CustomerCreatedInput, CustomerDeletedInput, CustomerUpdatedInput } from '../../../../generated/schemas';
import { crudOperations, without } from '../crud-operations';
import { employeeIdByNumber } from '../references';

/** customer.created / updated / deleted: identified by customer_name; an update renames with name. */
export const customerOperations = crudOperations({
  record: 'customer',
  schema: 'inbound/customer.json',
  service: customers,
  keyField: 'customer_name',
  describe: (data: CustomerUpdatedInput | CustomerDeletedInput) => `Customer "${data.customer_name}"`,
  describeNew: (data: CustomerCreatedInput) => `Customer "${data.name}"`,
  find: (em, companyId, data) => customers.findIdByKey(em, companyId, [data.customer_name]),
  toCreate: async (em, companyId, data: CustomerCreatedInput) => ({
    ...without(data, 'account_manager_emp_number'),
    account_manager_id: await employeeIdByNumber(em, companyId, data.account_manager_emp_number, 'account_manager_emp_number'),
  }),
  toUpdate: async (em, companyId, data: CustomerUpdatedInput) => ({
    ...without(data, 'customer_name', 'account_manager_emp_number'),
    account_manager_id: await employeeIdByNumber(em, companyId, data.account_manager_emp_number, 'account_manager_emp_number'),
  }),
});
