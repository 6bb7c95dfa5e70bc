import { VENDOR_APPROVAL_STATUSES, VENDOR_TYPES } from '../../domain/supply/vendor.entity';
import { vendors } from '../../domain/supply/vendors';
import { byMember, byText, byValue } from './filters';
import { defineResource } from './resource';

export const vendorsResource = defineResource({
  collection: 'vendors',
  label: 'Vendor',
  plural: 'vendors',
  description: 'Subcontractors, suppliers and consultants. Deleting a vendor deletes its locations.',
  schema: 'rest/vendors.json',
  service: vendors,
  filters: [
    byText('vendor_name', 'name', 'The vendor with this name (ignoring case).'),
    byValue('type', 'type', VENDOR_TYPES, 'Vendors of this type.'),
    byValue('approval_status', 'approvalStatus', VENDOR_APPROVAL_STATUSES, 'Vendors with this approval status.'),
    byMember('trade_specialty', 'tradeSpecialty', 'Vendors offering this trade (exact).'),
    byMember('region', 'regions', 'Vendors serving this region (exact).'),
    byText('state', 'address.province', 'Vendors in this state or province (2-letter code).'),
  ],
});
