import { Entity, Index, ManyToOne, type Opt, Property, type Ref, Unique } from '@mikro-orm/core';
import { CompanyRecord } from '../company-record';
import { Employee } from '../people/employee.entity';
import { WorkOrder } from '../work/work-order.entity';

export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** One line of a completion report's scope or completion checklist, as sent (webhooks.md 2.9). */
export interface ChecklistItem {
  item_name: string;
  status: string;
  notes: string | null;
}

/**
 * What daily and completion reports share: the work order they are about, who submitted them, and their
 * approval, which the reportApproval workflow waits for unless the report was approved at once.
 */
export abstract class Report extends CompanyRecord {
  /** Reports go with their work order. */
  @ManyToOne(() => WorkOrder, { ref: true, deleteRule: 'cascade' })
  workOrder!: Ref<WorkOrder>;

  @Property({ type: 'date' })
  reportDate!: string;

  @ManyToOne(() => Employee, { ref: true, nullable: true, deleteRule: 'set null' })
  submittedBy: Ref<Employee> | null = null;

  @Property({ type: 'text[]' })
  photos: Opt<string[]> = [];

  @Property({ type: 'boolean' })
  isAutoApproved: Opt<boolean> = false;

  @Property({ type: 'text' })
  approvalStatus: Opt<ApprovalStatus> = 'pending';

  /** When the approval deadline passes (and the workflow reminds); null for a report approved at once. */
  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  approvalDueAt: Date | null = null;

  @Property({ type: 'integer' })
  remindersSent: Opt<number> = 0;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  decidedAt: Date | null = null;

  /** The employee who approved or rejected it, when the decision named one. */
  @ManyToOne(() => Employee, { ref: true, nullable: true, deleteRule: 'set null' })
  decidedBy: Ref<Employee> | null = null;

  @Property({ type: 'text', nullable: true })
  decisionNotes: string | null = null;

  /** The reportApproval workflow that waits for the decision; null when none was needed. */
  @Property({ type: 'text', nullable: true })
  workflowId: string | null = null;
}

/** A day's report on a work order (webhooks.md 2.9); one per work order and day, unless rejected. */
@Entity({ tableName: 'daily_reports' })
@Index({ name: 'daily_reports_company_created_idx', properties: ['company', 'createdAt', 'id'] })
@Index({ name: 'daily_reports_work_order_idx', properties: ['workOrder'] })
@Unique({
  name: 'daily_reports_work_order_date_unique',
  expression: `create unique index "daily_reports_work_order_date_unique" on "daily_reports" ("work_order_id", "report_date") where "approval_status" <> 'rejected'`,
})
export class DailyReport extends Report {
  @Property({ type: 'text', nullable: true })
  notes: string | null = null;

  @Property({ type: 'text', nullable: true })
  workCompleted: string | null = null;

  @Property({ type: 'text', nullable: true })
  materialsUsed: string | null = null;

  @Property({ type: 'text', nullable: true })
  weatherConditions: string | null = null;

  @Property({ type: 'text', nullable: true })
  safetyIncidents: string | null = null;

  @Property({ type: 'double', nullable: true })
  hoursWorked: number | null = null;

  /** As sent, else the people on the work order (site lead and crew) when the report came in. */
  @Property({ type: 'integer' })
  crewCount!: number;
}

/** The report that a work order is done (webhooks.md 2.9); its approval completes the work order. One may wait per work order. */
@Entity({ tableName: 'completion_reports' })
@Index({ name: 'completion_reports_company_created_idx', properties: ['company', 'createdAt', 'id'] })
@Index({ name: 'completion_reports_work_order_idx', properties: ['workOrder'] })
@Unique({
  name: 'completion_reports_pending_unique',
  expression: `create unique index "completion_reports_pending_unique" on "completion_reports" ("work_order_id") where "approval_status" = 'pending'`,
})
export class CompletionReport extends Report {
  @Property({ type: 'text', nullable: true })
  completionSummary: string | null = null;

  @Property({ type: 'json' })
  scopeChecklist: Opt<ChecklistItem[]> = [];

  @Property({ type: 'json' })
  completionChecklist: Opt<ChecklistItem[]> = [];

  @Property({ type: 'boolean' })
  requiresApproval: Opt<boolean> = true;
}
