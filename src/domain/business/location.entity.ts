import { Entity, Index, ManyToOne, Property, Unique, type Ref } from '@mikro-orm/core';
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

  @Property({ type: 'text', fieldName: 'address_line_1', nullable: true })
  addressLine1: string | null = null;

  @Property({ type: 'text', fieldName: 'address_line_2', nullable: true })
  addressLine2: string | null = null;

  @Property({ type: 'text', nullable: true })
  city: string | null = null;

  @Property({ type: 'text', nullable: true })
  province: string | null = null;

  @Property({ type: 'text', nullable: true })
  postalCode: string | null = null;

  @Property({ type: 'text', nullable: true })
  country: string | null = null;

  @Property({ type: 'text', nullable: true })
  phone: string | null = null;

  @Property({ type: 'text', nullable: true })
  notes: string | null = null;

  @Property({ type: 'double', nullable: true })
  latitude: number | null = null;

  @Property({ type: 'double', nullable: true })
  longitude: number | null = null;
}
