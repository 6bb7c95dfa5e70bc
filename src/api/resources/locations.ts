import { locations } from '../../domain/business/locations';
import { byId, byText } from './filters';
import { defineResource } from './resource';

export const locationsResource = defineResource({
  collection: 'locations',
  label: 'Location',
  plural: 'locations',
  description: 'Sites of a customer. Deleting a location that projects are at is refused (409).',
  schema: 'rest/locations.json',
  service: locations,
  filters: [
    byId('customer_id', 'customer', 'Locations of this customer.'),
    byText('name', 'name', 'Locations with this name (ignoring case).'),
    byText('city', 'address.city', 'Locations in this city (ignoring case).'),
  ],
});
