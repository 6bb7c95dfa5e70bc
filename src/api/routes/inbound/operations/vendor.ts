import { vendors } from '../../../../domain/supply/vendors';
import type { VendorCreatedInput, VendorDeletedInput, VendorUpdatedInput } from '../../../../generated/schemas';
import { crudOperations, without } from '../crud-operations';

/** vendor.created / updated / deleted: identified by vendor_name (webhooks.md 2.5). */
export const vendorOperations = crudOperations({
  record: 'vendor',
  schema: 'inbound/vendor.json',
  service: vendors,
  keyField: 'vendor_name',
  describe: (data: VendorUpdatedInput | VendorDeletedInput) => `Vendor "${data.vendor_name}"`,
  describeNew: (data: VendorCreatedInput) => `Vendor "${data.vendor_name}"`,
  find: (em, companyId, data) => vendors.findIdByKey(em, companyId, [data.vendor_name]),
  toCreate: async (_em, _companyId, data: VendorCreatedInput) => data,
  toUpdate: async (_em, _companyId, data: VendorUpdatedInput) => without(data, 'vendor_name'),
});
