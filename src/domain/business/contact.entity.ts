import { Entity, Index, ManyToOne, type Opt, Property, Unique, type Ref } from '@mikro-orm/core';
import { CompanyRecord } from '../company-record';
import { Customer } from './customer.entity';
import { Location } from './location.entity';

/** A person at a customer, identified (as the inbound contact operations do) by customer, first and last name. */
@Entity({ tableName: 'contacts' })
@Index({ name: 'contacts_company_created_idx', properties: ['company', 'createdAt', 'id'] })
@Unique({
  name: 'contacts_customer_name_unique',
  expression: 'create unique index "contacts_customer_name_unique" on "contacts" ("customer_id", lower("first_name"), lower("last_name"))',
})
export class Contact extends CompanyRecord {
  @ManyToOne(() => Customer, { ref: true, deleteRule: 'cascade' })
  customer!: Ref<Customer>;

  @ManyToOne(() => Location, { ref: true, nullable: true, deleteRule: 'set null' })
  location: Ref<Location> | null = null;

  @Property({ type: 'text' })
  firstName!: string;

  @Property({ type: 'text' })
  lastName!: string;

  @Property({ type: 'text', nullable: true })
  title: string | null = null;

  @Property({ type: 'text', nullable: true })
  email: string | null = null;

  @Property({ type: 'text', nullable: true })
  phone: string | null = null;

  @Property({ type: 'text', nullable: true })
  phoneExt: string | null = null;

  @Property({ type: 'text', nullable: true })
  mobile: string | null = null;

  @Property({ type: 'text', nullable: true })
  notes: string | null = null;

  @Property({ type: 'boolean' })
  isPrimary: Opt<boolean> = false;

  @Property({ type: 'text[]' })
  tags: Opt<string[]> = [];
}
