import { Entity, Index, type Opt, Property } from '@mikro-orm/core';
import { CompanyRecord } from '../company-record';

export const PAYROLL_RUN_STATUSES = ['running', 'completed'] as const;
export type PayrollRunStatus = (typeof PAYROLL_RUN_STATUSES)[number];

/**
 * One payroll batch over a period: the payrollRun workflow processes every timesheet of the period that is
 * locked, then records the batch event. The timesheets it processed point at it.
 */
@Entity({ tableName: 'payroll_runs' })
@Index({ name: 'payroll_runs_company_created_idx', properties: ['company', 'createdAt', 'id'] })
export class PayrollRun extends CompanyRecord {
  @Property({ type: 'date' })
  periodStart!: string;

  @Property({ type: 'date' })
  periodEnd!: string;

  @Property({ type: 'text' })
  status: Opt<PayrollRunStatus> = 'running';

  /** How many timesheets it processed; null while running. */
  @Property({ type: 'integer', nullable: true })
  totalCount: number | null = null;

  /** The API key that asked for it: the batch's processed_by. */
  @Property({ type: 'uuid' })
  requestedBy!: string;

  @Property({ type: 'text' })
  workflowId!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  completedAt: Date | null = null;
}
