import { contacts } from '../../../../domain/business/contacts';
import { customers } from '../../../../domain/business/customers';
import type { ContactCreatedInput, ContactDeletedInput, ContactUpdatedInput } from '../../../../generated/schemas';
import { crudOperations, without } from '../crud-operations';
import { customerIdByName, locationIdByName } from '../references';

/** contact.created / updated / deleted: identified by customer_name, first_name and last_name. */
export const contactOperations = crudOperations({
  record: 'contact',
  schema: 'inbound/contact.json',
  service: contacts,
  keyField: 'first_name',
  describe: (data: ContactUpdatedInput | ContactDeletedInput) => `Contact "${data.first_name} ${data.last_name}" of customer "${data.customer_name}"`,
  describeNew: (data: ContactCreatedInput) => `Contact "${data.first_name} ${data.last_name}" of customer "${data.customer_name}"`,
  async find(em, companyId, data) {
    const customerId = await customers.findIdByKey(em, companyId, [data.customer_name]);
    return customerId && contacts.findIdByKey(em, companyId, [data.first_name, data.last_name], customerId);
  },
  async toCreate(em, companyId, data: ContactCreatedInput) {
    const customerId = await customerIdByName(em, companyId, data.customer_name);
    return {
      ...without(data, 'customer_name', 'location_name'),
      customer_id: customerId,
      location_id: await locationIdByName(em, companyId, customerId, data.location_name),
    };
  },
  async toUpdate(em, companyId, data: ContactUpdatedInput) {
    const customerId = await customerIdByName(em, companyId, data.customer_name);
    return {
      ...without(data, 'customer_name', 'first_name', 'last_name', 'location_name'),
      location_id: await locationIdByName(em, companyId, customerId, data.location_name),
    };
  },
});
