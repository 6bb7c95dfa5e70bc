import { Entity, Index, type Opt, Property, Unique } from '@mikro-orm/core';
import { CompanyRecord } from '../company-record';

/**
 * A kind of work a timesheet entry records (webhooks.md 2.8): the built-ins REG, OT, VAC, SICK and HOL of every
 * company, and the company's own. Names and codes are unique in the company, case-insensitively; exactly one
 * type is the company's default.
 */
@Entity({ tableName: 'work_types' })
@Index({ name: 'work_types_company_created_idx', properties: ['company', 'createdAt', 'id'] })
@Unique({ name: 'work_types_company_name_unique', expression: 'create unique index "work_types_company_name_unique" on "work_types" ("company_id", lower("name"))' })
@Unique({ name: 'work_types_company_code_unique', expression: 'create unique index "work_types_company_code_unique" on "work_types" ("company_id", lower("code"))' })
@Unique({
  name: 'work_types_company_default_unique',
  expression: 'create unique index "work_types_company_default_unique" on "work_types" ("company_id") where "is_default"',
})
export class WorkType extends CompanyRecord {
  /** What senders name it by (work_type_code); null for a type known only by its name. */
  @Property({ type: 'text', nullable: true })
  code: string | null = null;

  @Property({ type: 'text' })
  name!: string;

  @Property({ type: 'boolean' })
  billable: Opt<boolean> = false;

  /** Whether entries of this type need a work order; null: when the type is billable. */
  @Property({ type: 'boolean', nullable: true })
  requiresWorkOrder: boolean | null = null;

  /** Pay rate relative to regular time (OT 1.5). */
  @Property({ type: 'double' })
  payMultiplier: Opt<number> = 1;

  /** Inactive types stay on the entries that have them but cannot be chosen for new or changed entries. */
  @Property({ type: 'boolean' })
  isActive: Opt<boolean> = true;

  /** The type of entries that name none. */
  @Property({ type: 'boolean' })
  isDefault: Opt<boolean> = false;

  @Property({ type: 'boolean' })
  isBuiltIn: Opt<boolean> = false;
}

/** Whether an entry of this type must name a work order (requires_work_order, else billable). */
export const needsWorkOrder = (type: WorkType): boolean => type.requiresWorkOrder ?? type.billable;
