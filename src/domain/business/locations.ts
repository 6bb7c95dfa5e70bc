import type { LocationCreate, Location as LocationRecord, LocationUpdate } from '../../generated/schemas';
import { locationCreatedData, locationDeletedData, locationUpdatedData } from './business-events';
import { ApiError } from '../../errors';
import { RecordService } from '../records/record-service';
import { coordinatesField } from '../records/wire-mapping';
import { Project } from '../work/project.entity';
import { Contact } from './contact.entity';
import { Customer } from './customer.entity';
import { Location } from './location.entity';

/** Sites of a customer. Deleting one that projects are at is refused (409); contacts there are unlinked from it. */
export const locations = new RecordService<Location, LocationRecord, LocationCreate, LocationUpdate>({
  entity: Location,
  label: 'Location',
  wire: {
    customer_id: { relation: 'customer', target: Customer, label: 'a customer' },
    name: 'name',
    address_line_1: 'address.line1',
    address_line_2: 'address.line2',
    city: 'address.city',
    province: 'address.province',
    postal_code: 'address.postalCode',
    country: 'address.country',
    phone: 'phone',
    notes: 'notes',
    coordinates: coordinatesField(),
  },
  naturalKey: { scope: 'customer', fields: ['name'], describe: (l) => `The customer already has a location named "${l.name}"`, uniqueIndex: 'locations_customer_name_unique' },
  populate: ['customer'],
  events: {
    created: (location, ctx) => ({ key: 'location.created', payload: { a: locationCreatedData(location, ctx) } }),
    updated: (location, _change, ctx) => ({ key: 'location.updated', payload: { a: locationUpdatedData(location, ctx) } }),
    deleted: (location, ctx) => ({ key: 'location.deleted', payload: { a: locationDeletedData(location, ctx) } }),
  },
  async beforeDelete(em, location) {
    const projects = await em.count(Project, { location });
    if (projects > 0) {
      throw new ApiError('CONFLICT', `Location "${location.name}" still has ${projects} project(s); delete them first`, {
        field: null,
        reason: `has ${projects} project(s)`,
      });
    }
    // Its contacts stay with the customer; they change (updated_since sees it), though no event field does.
    await em.nativeUpdate(Contact, { location }, { location: null, updatedAt: new Date() });
  },
});
