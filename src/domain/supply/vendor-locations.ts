import type { VendorLocationCreate, VendorLocation as VendorLocationRecord, VendorLocationUpdate } from '../../generated/schemas';
import { normaliseState } from '../common/postal-address';
import { lockNaturalKey } from '../natural-keys';
import { RecordService } from '../records/record-service';
import { coordinatesField } from '../records/wire-mapping';
import { VendorLocation } from './vendor-location.entity';
import { Vendor } from './vendor.entity';

/**
 * Sites of a vendor (REST only; the spec defines no events for them). At most one site of a vendor is
 * primary: marking one clears the others.
 */
export const vendorLocations = new RecordService<VendorLocation, VendorLocationRecord, VendorLocationCreate, VendorLocationUpdate>({
  entity: VendorLocation,
  label: 'Vendor location',
  wire: {
    vendor_id: { relation: 'vendor', target: Vendor, label: 'a vendor' },
    name: 'name',
    address_line_1: 'address.line1',
    address_line_2: 'address.line2',
    city: 'address.city',
    state: 'address.province',
    postal_code: 'address.postalCode',
    country: 'address.country',
    phone: 'phone',
    email: 'email',
    is_primary: 'isPrimary',
    notes: 'notes',
    coordinates: coordinatesField(),
  },
  naturalKey: { scope: 'vendor', fields: ['name'], describe: (l) => `The vendor already has a location named "${l.name}"`, uniqueIndex: 'vendor_locations_vendor_name_unique' },
  prepare(input) {
    if (typeof input.state === 'string') input.state = normaliseState(input.state, 'state');
    return input;
  },
  async check(em, location) {
    if (location.isPrimary) {
      // One writer of a vendor's primary site at a time; the site cleared changes too (updated_since sees it).
      await lockNaturalKey(em, location.vendor.id, 'vendor_locations.primary');
      await em.nativeUpdate(
        VendorLocation,
        { vendor: location.vendor.id, isPrimary: true, id: { $ne: location.id } },
        { isPrimary: false, updatedAt: new Date() },
      );
    }
  },
});
