import { Embedded, Entity, Index, ManyToOne, Property, Unique, type Ref } from '@mikro-orm/core';
import { PostalAddress } from '../common/postal-address';
import { CompanyRecord } from '../company-record';
import { Employee } from '../people/employee.entity';

/** A client of the company. Inbound operations identify customers by name, case-insensitively. */
@Entity({ tableName: 'customers' })
@Index({ name: 'customers_company_created_idx', properties: ['company', 'createdAt', 'id'] })
@Unique({ name: 'customers_company_name_unique', expression: 'create unique index "customers_company_name_unique" on "customers" ("company_id", lower("name"))' })
export class Customer extends CompanyRecord {
  @Property({ type: 'text' })
  name!: string;

  @Property({ type: 'text', nullable: true })
  type: string | null = null;

  @Property({ type: 'text', nullable: true })
  email: string | null = null;

  @Property({ type: 'text', nullable: true })
  phone: string | null = null;

  @Property({ type: 'text', nullable: true })
  website: string | null = null;

  @Property({ type: 'text', nullable: true })
  status: string | null = null;

  @Property({ type: 'text', nullable: true })
  notes: string | null = null;

  @Embedded(() => PostalAddress, { prefix: 'billing_' })
  billingAddress = new PostalAddress();

  @ManyToOne(() => Employee, { ref: true, nullable: true, deleteRule: 'set null' })
  accountManager: Ref<Employee> | null = null;
}
