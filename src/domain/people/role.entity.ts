import { Entity, Property, Unique } from '@mikro-orm/core';
import { CompanyRecord } from '../company-record';

/** An employee's role: created on first use by an employee operation, matched case-insensitively. */
@Entity({ tableName: 'roles' })
@Unique({ name: 'roles_company_name_unique', expression: 'create unique index "roles_company_name_unique" on "roles" ("company_id", lower("name"))' })
export class Role extends CompanyRecord {
  @Property({ type: 'text' })
  name!: string;
}
