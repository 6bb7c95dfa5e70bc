import { Entity, Property, Unique } from '@mikro-orm/core';
import { CompanyRecord } from '../company-record';

/** An employee's department: created on first use by an employee operation, matched case-insensitively. */
@Entity({ tableName: 'departments' })
@Unique({ name: 'departments_company_name_unique', expression: 'create unique index "departments_company_name_unique" on "departments" ("company_id", lower("name"))' })
export class Department extends CompanyRecord {
  @Property({ type: 'text' })
  name!: string;
}
