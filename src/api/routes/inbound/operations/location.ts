import { locations } from '../../../../domain/business/locations';
import type { LocationCreatedInput, LocationDeletedInput, LocationUpdatedInput } from '../../../../generated/schemas';
import { crudOperations, without } from '../crud-operations';
import { customerIdByName } from '../references';
import { customers } from '../../../../domain/business/customers';

/** location.created / updated / deleted: identified by customer_name with location_name; an update renames with name. */
export const locationOperations = crudOperations({
  record: 'location',
  schema: 'inbound/location.json',
  service: locations,
  keyField: 'location_name',
  describe: (data: LocationUpdatedInput | LocationDeletedInput) => `Location "${data.location_name}" of customer "${data.customer_name}"`,
  describeNew: (data: LocationCreatedInput) => `Location "${data.name}" of customer "${data.customer_name}"`,
  async find(em, companyId, data) {
    const customerId = await customers.findIdByKey(em, companyId, [data.customer_name]);
    return customerId && locations.findIdByKey(em, companyId, [data.location_name], customerId);
  },
  toCreate: async (em, companyId, data: LocationCreatedInput) => ({
    ...without(data, 'customer_name'),
    customer_id: await customerIdByName(em, companyId, data.customer_name),
  }),
  toUpdate: async (_em, _companyId, data: LocationUpdatedInput) => without(data, 'customer_name', 'location_name'),
});
