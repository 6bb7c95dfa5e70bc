import { vendorLocations } from '../../domain/supply/vendor-locations';
import { byFlag, byId, byText } from './filters';
import { defineResource } from './resource';

export const vendorLocationsResource = defineResource({
  collection: 'vendor-locations',
  label: 'Vendor location',
  plural: 'vendor locations',
  description: 'Sites of a vendor: branches, yards and warehouses. REST only; they emit no events.',
  schema: 'rest/vendor-locations.json',
  service: vendorLocations,
  filters: [
    byId('vendor_id', 'vendor', 'Locations of this vendor.'),
    byText('city', 'address.city', 'Locations in this city (ignoring case).'),
    byText('state', 'address.province', 'Locations in this state or province (2-letter code).'),
    byFlag('is_primary', 'isPrimary', 'Only primary (true) or only other (false) sites.'),
  ],
});
