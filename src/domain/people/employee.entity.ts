import { Collection, Entity, Index, ManyToMany, ManyToOne, Property, Unique, type Ref } from '@mikro-orm/core';
import { CompanyRecord } from '../company-record';
import { Department } from './department.entity';
import { Role } from './role.entity';
import { Skill } from './skill.entity';

export const EMPLOYEE_TYPES = ['site_worker', 'site_lead', 'project_owner', 'office'] as const;
export type EmployeeType = (typeof EMPLOYEE_TYPES)[number];

/** A person of the company; `empNumber` is the public identifier other systems use (unique, ignoring case). */
@Entity({ tableName: 'employees' })
@Index({ name: 'employees_company_created_idx', properties: ['company', 'createdAt', 'id'] })
@Unique({
  name: 'employees_company_emp_number_unique',
  expression: 'create unique index "employees_company_emp_number_unique" on "employees" ("company_id", lower("emp_number"))',
})
export class Employee extends CompanyRecord {
  @Property({ type: 'text' })
  empNumber!: string;

  @Property({ type: 'text' })
  name!: string;

  @Property({ type: 'text' })
  email!: string;

  @Property({ type: 'text', nullable: true })
  phone: string | null = null;

  @ManyToOne(() => Department, { ref: true, nullable: true, deleteRule: 'set null' })
  department: Ref<Department> | null = null;

  @ManyToOne(() => Role, { ref: true, nullable: true, deleteRule: 'set null' })
  role: Ref<Role> | null = null;

  @Property({ type: 'text' })
  employeeType!: EmployeeType;

  @Property({ type: 'date', nullable: true })
  startDate: string | null = null;

  @Property({ type: 'text', nullable: true })
  emergencyContactName: string | null = null;

  @Property({ type: 'text', nullable: true })
  emergencyContactPhone: string | null = null;

  @Property({ type: 'text', nullable: true })
  emergencyContactRelationship: string | null = null;

  @ManyToMany(() => Skill, undefined, { pivotTable: 'employee_skills', owner: true })
  skills = new Collection<Skill>(this);
}
