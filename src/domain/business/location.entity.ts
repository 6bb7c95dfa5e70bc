import { Embedded, Entity, Index, ManyToOne, Property, Unique, type Ref } from '@mikro-orm/core';
import { PostalAddress } from '../common/postal-address';
import { CompanyRecord } from '../company-record';
import { Customer } from './customer.entity';

/** A site of a customer. Its name is unique (case-insensitively) under that customer. */
@Entity({ tableName: 'locations' })
@Index({ name: 'locations_company_created_idx', properties: ['company', 'createdAt', 'id'] })
@Unique({ name: 'locations_customer_name_unique', expression: 'create unique index "locations_customer_name_unique" on "locations" ("customer_id", lower("name"))' })
export class Location extends CompanyRecord {
  @ManyToOne(() => Customer, { ref: true, deleteRule: 'cascade' })
  customer!: Ref<Customer>;

  @Property({ type: 'text' })
  name!: string;

  @Embedded(() => PostalAddress, { prefix: false })
  address = new PostalAddress();

  @Property({ type: 'text', nullable: true })
  phone: string | null = null;

  @Property({ type: 'text', nullable: true })
  notes: string | null = null;

  @Property({ type: 'double', nullable: true })
  latitude: number | null = null;

  @Property({ type: 'double', nullable: true })
  longitude: number | null = null;
}
