import { Embedded, Entity, Index, type Opt, Property, Unique } from '@mikro-orm/core';
import { PostalAddress } from '../common/postal-address';
import { CompanyRecord } from '../company-record';

export const VENDOR_TYPES = ['subcontractor', 'supplier', 'consultant'] as const;
export const VENDOR_APPROVAL_STATUSES = ['pending', 'approved', 'suspended', 'rejected'] as const;

/** A subcontractor, supplier or consultant; other systems identify it by name (case-insensitively). */
@Entity({ tableName: 'vendors' })
@Index({ name: 'vendors_company_created_idx', properties: ['company', 'createdAt', 'id'] })
@Unique({ name: 'vendors_company_name_unique', expression: 'create unique index "vendors_company_name_unique" on "vendors" ("company_id", lower("name"))' })
export class Vendor extends CompanyRecord {
  @Property({ type: 'text' })
  name!: string;

  @Property({ type: 'text', nullable: true })
  type: (typeof VENDOR_TYPES)[number] | null = null;

  @Property({ type: 'text[]' })
  tradeSpecialty: Opt<string[]> = [];

  @Property({ type: 'text', nullable: true })
  primaryContactName: string | null = null;

  @Property({ type: 'text', nullable: true })
  primaryContactEmail: string | null = null;

  @Property({ type: 'text', nullable: true })
  primaryContactPhone: string | null = null;

  @Embedded(() => PostalAddress, { prefix: false })
  address = new PostalAddress();

  @Property({ type: 'text', nullable: true })
  approvalStatus: (typeof VENDOR_APPROVAL_STATUSES)[number] | null = null;

  @Property({ type: 'double', nullable: true })
  rating: number | null = null;

  @Property({ type: 'text[]' })
  regions: Opt<string[]> = [];

  @Property({ type: 'text', nullable: true })
  notes: string | null = null;

  @Property({ type: 'date', nullable: true })
  insuranceExpiryDate: string | null = null;

  @Property({ type: 'date', nullable: true })
  complianceExpiryDate: string | null = null;

  @Property({ type: 'text[]' })
  certifications: Opt<string[]> = [];

  @Property({ type: 'json' })
  customFields: Opt<Record<string, string | number | boolean | null>> = {};
}
