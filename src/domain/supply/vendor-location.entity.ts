import { Embedded, Entity, Index, ManyToOne, type Opt, Property, type Ref, Unique } from '@mikro-orm/core';
import { PostalAddress } from '../common/postal-address';
import { CompanyRecord } from '../company-record';
import { Vendor } from './vendor.entity';

/** A site of a vendor (branch, yard, warehouse); its name is unique under the vendor, case-insensitively. */
@Entity({ tableName: 'vendor_locations' })
@Index({ name: 'vendor_locations_company_created_idx', properties: ['company', 'createdAt', 'id'] })
@Unique({
  name: 'vendor_locations_vendor_name_unique',
  expression: 'create unique index "vendor_locations_vendor_name_unique" on "vendor_locations" ("vendor_id", lower("name"))',
})
export class VendorLocation extends CompanyRecord {
  @ManyToOne(() => Vendor, { ref: true, deleteRule: 'cascade' })
  vendor!: Ref<Vendor>;

  @Property({ type: 'text' })
  name!: string;

  @Embedded(() => PostalAddress, { prefix: false })
  address = new PostalAddress();

  @Property({ type: 'text', nullable: true })
  phone: string | null = null;

  @Property({ type: 'text', nullable: true })
  email: string | null = null;

  @Property({ type: 'boolean' })
  isPrimary: Opt<boolean> = false;

  @Property({ type: 'text', nullable: true })
  notes: string | null = null;

  @Property({ type: 'double', nullable: true })
  latitude: number | null = null;

  @Property({ type: 'double', nullable: true })
  longitude: number | null = null;
}
