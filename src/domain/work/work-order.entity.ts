import { Collection, Entity, Index, ManyToMany, ManyToOne, type Opt, Property, Unique, type Ref } from '@mikro-orm/core';
import { CompanyRecord } from '../company-record';
import { Employee } from '../people/employee.entity';
import { Project } from './project.entity';

export const WORK_ORDER_STATUSES = ['open', 'scheduled', 'in_progress', 'on_hold', 'complete', 'closed', 'cancelled'] as const;
export type WorkOrderStatus = (typeof WORK_ORDER_STATUSES)[number];

/**
 * A unit of work on a project. REST calls the phase name `title`; the webhook interface calls it
 * `phase_name`. `workOrderNumber` (WO-000001, per company) identifies it to other systems.
 */
@Entity({ tableName: 'work_orders' })
@Index({ name: 'work_orders_company_created_idx', properties: ['company', 'createdAt', 'id'] })
@Index({ name: 'work_orders_project_idx', properties: ['project'] })
@Unique({ name: 'work_orders_company_number_unique', properties: ['company', 'workOrderNumber'] })
export class WorkOrder extends CompanyRecord {
  @ManyToOne(() => Project, { ref: true, deleteRule: 'cascade' })
  project!: Ref<Project>;

  @Property({ type: 'text' })
  workOrderNumber!: string;

  @Property({ type: 'text' })
  title!: string;

  @Property({ type: 'text' })
  status: Opt<WorkOrderStatus> = 'open';

  @Property({ type: 'text' })
  priority: Opt<string> = 'normal';

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  scheduledStart: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  scheduledEnd: Date | null = null;

  @ManyToMany(() => Employee, undefined, { pivotTable: 'work_order_assignees', owner: true })
  assignees = new Collection<Employee>(this);
}
