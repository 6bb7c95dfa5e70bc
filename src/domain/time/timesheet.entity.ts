import { Collection, Entity, Index, ManyToOne, OneToMany, type Opt, Property, type Ref, Unique } from '@mikro-orm/core';
import { CompanyRecord } from '../company-record';
import { Employee } from '../people/employee.entity';
import { WorkOrder } from '../work/work-order.entity';
import { PayrollRun } from './payroll-run.entity';
import { WorkType } from './work-type.entity';

export const TIMESHEET_STATUSES = ['draft', 'submitted', 'locked', 'processed'] as const;
export type TimesheetStatus = (typeof TIMESHEET_STATUSES)[number];

/** One employee's time for one day (webhooks.md 2.8), moving through the lifecycle of section 3. */
@Entity({ tableName: 'timesheets' })
@Index({ name: 'timesheets_company_created_idx', properties: ['company', 'createdAt', 'id'] })
@Index({ name: 'timesheets_company_status_date_idx', properties: ['company', 'status', 'timesheetDate'] })
@Unique({ name: 'timesheets_employee_date_unique', properties: ['employee', 'timesheetDate'] })
export class Timesheet extends CompanyRecord {
  @ManyToOne(() => Employee, { ref: true, deleteRule: 'restrict' })
  employee!: Ref<Employee>;

  @Property({ type: 'date' })
  timesheetDate!: string;

  @Property({ type: 'text' })
  status: Opt<TimesheetStatus> = 'draft';

  /** The total the sender gave; null when the total is the sum of the entries. */
  @Property({ type: 'double', nullable: true })
  totalHours: number | null = null;

  @Property({ type: 'text', nullable: true })
  notes: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  submittedAt: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  lockedAt: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  processedAt: Date | null = null;

  /** The payroll batch that processed it, if one did. */
  @ManyToOne(() => PayrollRun, { ref: true, nullable: true, deleteRule: 'set null' })
  payrollRun: Ref<PayrollRun> | null = null;

  @OneToMany(() => TimesheetEntry, (entry) => entry.timesheet, { orphanRemoval: true, orderBy: { id: 'asc' } })
  entries = new Collection<TimesheetEntry>(this);
}

/** Time on one kind of work (and work order) within a timesheet; several per day are allowed. */
@Entity({ tableName: 'timesheet_entries' })
@Index({ name: 'timesheet_entries_timesheet_idx', properties: ['timesheet'] })
@Index({ name: 'timesheet_entries_work_type_idx', properties: ['workType'] })
@Index({ name: 'timesheet_entries_work_order_idx', properties: ['workOrder'] })
export class TimesheetEntry extends CompanyRecord {
  @ManyToOne(() => Timesheet, { ref: true, deleteRule: 'cascade' })
  timesheet!: Ref<Timesheet>;

  @Property({ type: 'date' })
  entryDate!: string;

  @Property({ type: 'double' })
  hours!: number;

  @ManyToOne(() => WorkType, { ref: true, deleteRule: 'restrict' })
  workType!: Ref<WorkType>;

  /** Hours billed to a work order keep it: the work order cannot be deleted while entries name it. */
  @ManyToOne(() => WorkOrder, { ref: true, nullable: true, deleteRule: 'restrict' })
  workOrder: Ref<WorkOrder> | null = null;

  /** HH:MM. */
  @Property({ type: 'text', nullable: true })
  startTime: string | null = null;

  @Property({ type: 'text', nullable: true })
  endTime: string | null = null;

  @Property({ type: 'text', nullable: true })
  notes: string | null = null;
}
