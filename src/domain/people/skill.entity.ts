import { Entity, Property, Unique } from '@mikro-orm/core';
import { CompanyRecord } from '../company-record';

/** An entry of a company's skill library; employee_skills must name existing entries (case-insensitively). */
@Entity({ tableName: 'skills' })
@Unique({ name: 'skills_company_name_unique', expression: 'create unique index "skills_company_name_unique" on "skills" ("company_id", lower("name"))' })
export class Skill extends CompanyRecord {
  @Property({ type: 'text' })
  name!: string;
}
