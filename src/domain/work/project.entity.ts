import { Collection, Entity, Index, ManyToMany, ManyToOne, type Opt, Property, Unique, type Ref } from '@mikro-orm/core';
import { Contact } from '../business/contact.entity';
import { Customer } from '../business/customer.entity';
import { Location } from '../business/location.entity';
import { CompanyRecord } from '../company-record';
import { Employee } from '../people/employee.entity';

export const PROJECT_STATUSES = ['active', 'on_hold', 'closed'] as const;
export type ProjectStatus = (typeof PROJECT_STATUSES)[number];

export interface ProjectDoc {
  name: string;
  url: string;
}

/** A construction project of a customer at one of its locations; `projectCode` identifies it to other systems. */
@Entity({ tableName: 'projects' })
@Index({ name: 'projects_company_created_idx', properties: ['company', 'createdAt', 'id'] })
@Index({ name: 'projects_customer_idx', properties: ['customer'] })
@Unique({ name: 'projects_company_code_unique', properties: ['company', 'projectCode'] })
export class Project extends CompanyRecord {
  @Property({ type: 'text' })
  projectCode!: string;

  @Property({ type: 'text' })
  name!: string;

  @Property({ type: 'text', nullable: true })
  description: string | null = null;

  @Property({ type: 'text' })
  status: Opt<ProjectStatus> = 'active';

  @Property({ type: 'text', nullable: true })
  priority: string | null = null;

  @Property({ type: 'integer', nullable: true })
  colorIndex: number | null = null;

  @ManyToOne(() => Customer, { ref: true, deleteRule: 'restrict' })
  customer!: Ref<Customer>;

  @ManyToOne(() => Location, { ref: true, deleteRule: 'restrict' })
  location!: Ref<Location>;

  @ManyToOne(() => Employee, { ref: true, nullable: true, deleteRule: 'set null' })
  accountManager: Ref<Employee> | null = null;

  @ManyToOne(() => Employee, { ref: true, nullable: true, deleteRule: 'set null' })
  internalManager: Ref<Employee> | null = null;

  @Property({ type: 'date', nullable: true })
  startDate: string | null = null;

  @Property({ type: 'date', nullable: true })
  endDate: string | null = null;

  @Property({ type: 'text[]' })
  equipment: Opt<string[]> = [];

  @Property({ type: 'json' })
  customFields: Opt<Record<string, string>> = {};

  @Property({ type: 'json' })
  docs: Opt<ProjectDoc[]> = [];

  @ManyToMany(() => Contact, undefined, { pivotTable: 'project_contacts', owner: true, fixedOrder: true, fixedOrderColumn: 'position' })
  contacts = new Collection<Contact>(this);

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  closedAt: Date | null = null;
}
