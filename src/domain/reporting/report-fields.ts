import { iso } from '../event-format';
import { Employee } from '../people/employee.entity';
import { idOf, type View } from '../page';
import type { FieldMapping } from '../records/wire-mapping';
import { WorkOrder } from '../work/work-order.entity';
import type { Report } from './report.entity';

/** The wire fields every report has, in REST's names: what it is about, who sent it, and its approval. */
export function reportFields<E extends Report>() {
  const read = (get: (report: View<Report>) => unknown): FieldMapping<E> => ({ read: (view) => get(view as unknown as View<Report>) });
  return {
    work_order_id: { relation: 'workOrder', target: WorkOrder, label: 'a work order' },
    report_date: 'reportDate',
    submitted_by_id: { relation: 'submittedBy', target: Employee, label: 'an employee' },
    photos: 'photos',
    is_auto_approved: 'isAutoApproved',
    approval_status: read((r) => r.approvalStatus),
    // Set by the service when the report is submitted (the schemas do not accept it).
    approval_due_at: {
      read: (view) => iso((view as unknown as Report).approvalDueAt),
      write: (report, value) => {
        report.approvalDueAt = value === null ? null : new Date(value as string);
      },
    },
    reminders_sent: read((r) => r.remindersSent),
    decided_at: read((r) => iso(r.decidedAt)),
    decided_by_id: read((r) => idOf(r.decidedBy)),
    decision_notes: read((r) => r.decisionNotes),
    workflow_id: read((r) => r.workflowId),
  } satisfies Record<string, FieldMapping<E>>;
}

/** What the submitting service adds to a create body: when the approval is due, if one is needed. */
export interface ApprovalDue {
  approval_due_at: string | null;
}

/** Relations the report events read. */
export const REPORT_EVENT_RELATIONS = ['workOrder', 'workOrder.project', 'submittedBy', 'decidedBy', 'decidedBy.role'] as const;

/** The reportApproval workflow of a report: one per report, named after it. */
export const reportApprovalWorkflowId = (kind: 'daily' | 'completion', reportId: string) => `report-approval/${kind}/${reportId}`;

/** A report approved at once needs no workflow; one that waits gets its workflow's id. */
export function settleApproval(report: Report, kind: 'daily' | 'completion', approvedAtOnce: boolean): void {
  if (approvedAtOnce) {
    report.approvalStatus = 'approved';
    report.approvalDueAt = null;
    report.decidedAt = report.createdAt;
  } else {
    report.approvalStatus = 'pending';
    report.workflowId = reportApprovalWorkflowId(kind, report.id);
  }
}
