import { Collection, Entity, Index, ManyToMany, ManyToOne, type Opt, Property, type Ref, Unique } from '@mikro-orm/core';
import { CompanyRecord } from '../company-record';
import { Employee } from '../people/employee.entity';
import { Project } from './project.entity';

export const WORK_ORDER_STATUSES = ['open', 'scheduled', 'in_progress', 'on_hold', 'complete', 'closed', 'cancelled'] as const;
export type WorkOrderStatus = (typeof WORK_ORDER_STATUSES)[number];

export interface ScopeOfWork {
  checklists: { title: string; items: { text: string; completed: boolean }[] }[];
}

export interface SchedulerNotes {
  subtrade_required: string | null;
  scheduling_insights: string | null;
}

/**
 * A unit of work on a project. REST calls the phase name `title`; the webhook interface calls it
 * `phase_name`. `workOrderNumber` (WO-000001, per company, unless the sender gives its own) identifies it to
 * other systems. Dates and times are kept as given (UTC when they came as a timestamp).
 */
@Entity({ tableName: 'work_orders' })
@Index({ name: 'work_orders_company_created_idx', properties: ['company', 'createdAt', 'id'] })
@Index({ name: 'work_orders_project_idx', properties: ['project'] })
@Index({ name: 'work_orders_company_start_idx', properties: ['company', 'startDate'] })
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

  @Property({ type: 'date', nullable: true })
  startDate: string | null = null;

  @Property({ type: 'date', nullable: true })
  endDate: string | null = null;

  @Property({ type: 'text', nullable: true })
  startTime: string | null = null;

  @Property({ type: 'text', nullable: true })
  endTime: string | null = null;

  @Property({ type: 'date', nullable: true })
  expectedStartDate: string | null = null;

  @Property({ type: 'date', nullable: true })
  expectedEndDate: string | null = null;

  @Property({ type: 'text', nullable: true })
  expectedStartTime: string | null = null;

  @Property({ type: 'text', nullable: true })
  expectedEndTime: string | null = null;

  @Property({ type: 'integer', nullable: true })
  peopleRequired: number | null = null;

  @Property({ type: 'json' })
  peopleSkillRequirements: Opt<Record<string, number>> = {};

  @Property({ type: 'text', nullable: true })
  daysHoursRequired: string | null = null;

  @Property({ type: 'text', nullable: true })
  performedBy: string | null = null;

  @ManyToOne(() => Employee, { ref: true, nullable: true, deleteRule: 'set null' })
  siteLead: Ref<Employee> | null = null;

  /** The crew, in the order it was given (the pivot keeps a position). */
  @ManyToMany(() => Employee, undefined, { pivotTable: 'work_order_assignees', owner: true, fixedOrder: true, fixedOrderColumn: 'position' })
  assignees = new Collection<Employee>(this);

  @Property({ type: 'json' })
  scopeOfWork: Opt<ScopeOfWork> = { checklists: [] };

  @Property({ type: 'text[]' })
  equipment: Opt<string[]> = [];

  @Property({ type: 'text[]' })
  specialtyMaterials: Opt<string[]> = [];

  @Property({ type: 'json' })
  schedulerNotes: Opt<SchedulerNotes> = { subtrade_required: null, scheduling_insights: null };

  @Property({ type: 'json' })
  customFields: Opt<Record<string, string>> = {};

  @Property({ type: 'integer', nullable: true })
  displayOrder: number | null = null;

  @Property({ type: 'boolean' })
  requireDailyReport: Opt<boolean> = false;

  @Property({ type: 'boolean' })
  requireCompletionReport: Opt<boolean> = false;

  @Property({ type: 'double', nullable: true })
  travelTimeHours: number | null = null;

  @Property({ type: 'double' })
  additionalLaborCost: Opt<number> = 0;
}
