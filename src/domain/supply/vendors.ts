import type { VendorCreate, Vendor as VendorRecord, VendorUpdate } from '../../generated/schemas';
import {
  VENDOR_SET_FIELDS,
  catalogVendorCreatedData,
  catalogVendorUpdatedData,
  vendorCreatedData,
  vendorDeletedData,
  vendorUpdatedData,
} from './supply-events';
import { ApiError } from '../../errors';
import { normaliseState, splitAddress } from '../common/postal-address';
import { RecordService } from '../records/record-service';
import { refuseWithPurchaseOrders } from './purchase-order.entity';
import { Vendor } from './vendor.entity';

/** Trimmed, without blanks or repeats (compared case-insensitively), in the order given. */
function tidyList(items: string[]): string[] {
  const seen = new Set<string>();
  return items.map((i) => i.trim()).filter((i) => i !== '' && !seen.has(i.toLowerCase()) && seen.add(i.toLowerCase()));
}

/**
 * The alternative input forms of webhooks.md 2.5, brought to one: trade_specialty as a list or one
 * comma-separated string; the address as separate fields or one combined string (split when city, state
 * and zip_code are all absent); state as a code or a full name (stored as the code).
 */
function prepareVendorInput(input: Record<string, unknown>): Record<string, unknown> {
  if (typeof input.trade_specialty === 'string') {
    const trades = tidyList(input.trade_specialty.split(','));
    // The string form is held to the bounds of the list form (schemas/common/definitions.json stringList).
    if (trades.length > 200) throw ApiError.invalid('trade_specialty', 'must name at most 200 trades');
    if (trades.some((t) => t.length > 200)) throw ApiError.invalid('trade_specialty', 'must name trades of at most 200 characters each');
    input.trade_specialty = trades;
  }
  for (const field of ['trade_specialty', 'regions', 'certifications']) {
    if (Array.isArray(input[field])) input[field] = tidyList(input[field] as string[]);
  }
  const { address } = input;
  const combined = typeof address === 'string' && address.includes(',') && [input.city, input.state, input.zip_code].every((v) => v === undefined);
  if (combined) {
    const parts = splitAddress(address);
    if (!parts) {
      throw ApiError.invalid('address', 'is one string that could not be split into street, city and state; send address, city, state and zip_code separately');
    }
    Object.assign(input, {
      address: parts.street,
      address_line2: input.address_line2 ?? parts.line2,
      city: parts.city,
      state: parts.state,
      zip_code: parts.zip,
      country: input.country ?? parts.country,
    });
  }
  if (typeof input.state === 'string') input.state = normaliseState(input.state, 'state');
  return input;
}

/** Vendors (webhooks.md 2.5). Their locations are deleted with them (vendor locations have no events). */
export const vendors = new RecordService<Vendor, VendorRecord, VendorCreate, VendorUpdate>({
  entity: Vendor,
  label: 'Vendor',
  wire: {
    vendor_name: 'name',
    type: 'type',
    trade_specialty: 'tradeSpecialty',
    primary_contact_name: 'primaryContactName',
    primary_contact_email: 'primaryContactEmail',
    primary_contact_phone: 'primaryContactPhone',
    address: 'address.line1',
    address_line2: 'address.line2',
    city: 'address.city',
    state: 'address.province',
    zip_code: 'address.postalCode',
    country: 'address.country',
    approval_status: 'approvalStatus',
    rating: 'rating',
    regions: 'regions',
    notes: 'notes',
    insurance_expiry_date: 'insuranceExpiryDate',
    compliance_expiry_date: 'complianceExpiryDate',
    certifications: 'certifications',
    custom_fields: 'customFields',
  },
  naturalKey: { scope: null, fields: ['name'], describe: (v) => `A vendor named "${v.name}" already exists`, uniqueIndex: 'vendors_company_name_unique' },
  setFields: VENDOR_SET_FIELDS,
  prepare: prepareVendorInput,
  events: {
    created: (vendor, ctx) => ({ key: 'vendor.created', payload: { a: vendorCreatedData(vendor, ctx), b: catalogVendorCreatedData(vendor) } }),
    updated: (vendor, change, ctx) => ({
      key: 'vendor.updated',
      payload: { a: vendorUpdatedData(vendor, change, ctx), b: catalogVendorUpdatedData(vendor, change) },
    }),
    deleted: (vendor, ctx) => ({ key: 'vendor.deleted', payload: { a: vendorDeletedData(vendor, ctx), b: vendorDeletedData(vendor, ctx) } }),
  },
  async beforeDelete(em, vendor) {
    await refuseWithPurchaseOrders(em, { vendor }, `Vendor "${vendor.name}"`);
  },
});
