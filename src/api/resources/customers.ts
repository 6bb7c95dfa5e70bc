import { customers } from '../../domain/business/customers';
import { byId, byText } from './filters';
import { defineResource } from './resource';

export const customersResource = defineResource({
  collection: 'customers',
  label: 'Customer',
  plural: 'customers',
  description: 'Clients of the company. Deleting a customer with projects is refused (409); its locations and contacts are deleted with it.',
  schema: 'rest/customers.json',
  service: customers,
  filters: [
    byText('name', 'name', 'Customers with this name (ignoring case).'),
    byText('status', 'status', 'Customers with this status (ignoring case), e.g. Active.'),
    byText('type', 'type', 'Customers of this type (ignoring case), e.g. commercial.'),
    byId('account_manager_id', 'accountManager', 'Customers this employee manages.'),
  ],
});
