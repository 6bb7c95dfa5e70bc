import type { ChangeContext } from '../records/record-service';
import type { Vendor } from './vendor.entity';
import type {
  CatalogVendorCreatedData,
  CatalogVendorDeletedData,
  CatalogVendorUpdatedData,
  Vendor as VendorRecord,
  VendorCreatedData,
  VendorDeletedData,
  VendorUpdatedData,
} from '../../generated/schemas';
import { changesBetween } from '../../events/changes';
import { postalAddressData, stamp } from '../event-format';

/** `changes` of vendor.updated: each changed field of the vendor's REST form; regions as a set. */
export const VENDOR_SET_FIELDS = ['regions'];

export const vendorCreatedData = (vendor: Vendor, ctx: ChangeContext): VendorCreatedData => ({
  id: vendor.id,
  vendor_name: vendor.name,
  type: vendor.type,
  // 6.1 carries the trades as one string.
  trade_specialty: vendor.tradeSpecialty.length ? vendor.tradeSpecialty.join(', ') : null,
  primary_contact_name: vendor.primaryContactName,
  primary_contact_email: vendor.primaryContactEmail,
  primary_contact_phone: vendor.primaryContactPhone,
  address: postalAddressData(vendor.address),
  rating: vendor.rating,
  insurance_expiry_date: vendor.insuranceExpiryDate,
  compliance_expiry_date: vendor.complianceExpiryDate,
  certifications: vendor.certifications,
  ...stamp('created', ctx.at, ctx.actor.apiKeyId),
});

export const catalogVendorCreatedData = (vendor: Vendor): CatalogVendorCreatedData => ({
  id: vendor.id,
  vendor_name: vendor.name,
  type: vendor.type,
  trade_specialty: vendor.tradeSpecialty,
  primary_contact_name: vendor.primaryContactName,
  primary_contact_email: vendor.primaryContactEmail,
  primary_contact_phone: vendor.primaryContactPhone,
  rating: vendor.rating,
  insurance_expiry_date: vendor.insuranceExpiryDate,
  compliance_expiry_date: vendor.complianceExpiryDate,
  regions: vendor.regions,
});

export const vendorUpdatedData = (vendor: Vendor, change: { before: VendorRecord; after: VendorRecord }, ctx: ChangeContext): VendorUpdatedData => ({
  id: vendor.id,
  vendor_name: vendor.name,
  type: vendor.type,
  rating: vendor.rating,
  primary_contact_phone: vendor.primaryContactPhone,
  insurance_expiry_date: vendor.insuranceExpiryDate,
  compliance_expiry_date: vendor.complianceExpiryDate,
  changes: changesBetween(change.before, change.after, 'A', VENDOR_SET_FIELDS),
  ...stamp('updated', ctx.at, ctx.actor.apiKeyId),
});

export const catalogVendorUpdatedData = (vendor: Vendor, change: { before: VendorRecord; after: VendorRecord }): CatalogVendorUpdatedData => ({
  ...catalogVendorCreatedData(vendor),
  changes: changesBetween(change.before, change.after, 'B', VENDOR_SET_FIELDS),
});

export const vendorDeletedData = (vendor: Vendor, ctx: ChangeContext): VendorDeletedData & CatalogVendorDeletedData => ({
  id: vendor.id,
  vendor_name: vendor.name,
  ...stamp('deleted', ctx.at, ctx.actor.apiKeyId),
});
