import { Entity, Index, ManyToOne, type Opt, Property, type Ref, Unique } from '@mikro-orm/core';
import { CompanyRecord } from '../company-record';

export const REPORT_TYPES = ['labor_hours_by_project', 'open_work_orders_by_project'] as const;
export type ReportType = (typeof REPORT_TYPES)[number];

export type ReportRow = Record<string, string | number | null>;

/** A recurring report; its Temporal Schedule (`report-schedule/<id>`) runs it. */
@Entity({ tableName: 'report_schedules' })
@Index({ name: 'report_schedules_company_created_idx', properties: ['company', 'createdAt', 'id'] })
export class ReportSchedule extends CompanyRecord {
  @Property({ type: 'text' })
  name!: string;

  @Property({ type: 'text' })
  reportType!: ReportType;

  @Property({ type: 'text' })
  cron!: string;

  @Property({ type: 'text' })
  timezone: Opt<string> = 'UTC';

  /** Kept without a foreign key: deleting the project must not change what the schedule asks for; its runs then fail, saying why. */
  @Property({ type: 'uuid', nullable: true })
  projectId: string | null = null;

  @Property({ type: 'integer', nullable: true })
  periodDays: number | null = null;

  /** The API key that created it. */
  @Property({ type: 'uuid' })
  createdBy!: string;
}

/** One run of a schedule: the report it generated (rows kept as JSON), or why it failed. */
@Entity({ tableName: 'report_runs' })
@Index({ name: 'report_runs_company_created_idx', properties: ['company', 'createdAt', 'id'] })
@Index({ name: 'report_runs_schedule_idx', properties: ['schedule'] })
@Unique({ name: 'report_runs_workflow_unique', properties: ['workflowId'] })
export class ReportRun extends CompanyRecord {
  /** Runs are kept when their schedule is deleted. */
  @ManyToOne(() => ReportSchedule, { ref: true, nullable: true, deleteRule: 'set null' })
  schedule: Ref<ReportSchedule> | null = null;

  @Property({ type: 'text' })
  reportType!: ReportType;

  @Property({ type: 'text' })
  name!: string;

  @Property({ type: 'text' })
  status!: 'generated' | 'failed';

  @Property({ type: 'date' })
  periodStart!: string;

  @Property({ type: 'date' })
  periodEnd!: string;

  /** The report's rows; null for a failed run. Lists read rowCount, never these. */
  @Property({ type: 'json', nullable: true, lazy: true })
  rows: ReportRow[] | null = null;

  @Property({ type: 'integer', nullable: true })
  rowCount: number | null = null;

  @Property({ type: 'text', nullable: true })
  failureReason: string | null = null;

  /** The scheduledReport workflow run that made it: a retried step finds its run by it. */
  @Property({ type: 'text' })
  workflowId!: string;
}
