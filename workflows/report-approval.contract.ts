import type { Actor } from '../src/domain/accounts/actor';
import type { ApprovalStatus } from '../src/domain/reporting/report.entity';
import { signal, workflowDef } from '../src/domain/workflow-contract';

/**
 * Report approval, one run per report that needs it (id: the report's workflow_id), on the operations task queue.
 * Started by submitReport and decideReport (src/domain/reporting/report-approval.ts). Its signal `decide` approves
 * or rejects the report: the first decision counts; later ones are ignored (the API refuses them with 409). Sent by
 * the REST approve and reject routes and inbound report.completion_approved.
 */
export const REPORT_APPROVAL = workflowDef<ReportApprovalInput, ReportApprovalResult>()({
  name: 'reportApproval',
  taskQueue: 'operations',
  signals: { decide: signal<[ReportDecision]>() },
});

export type ReportKind = 'daily' | 'completion';

/** Input of the reportApproval workflow: which report waits, and how long before each reminder. */
export interface ReportApprovalInput {
  companyId: string;
  kind: ReportKind;
  reportId: string;
  /** The approval deadline, and the period of reminders after it; injected so tests wait seconds. */
  deadlineMs: number;
}

/** A manager's decision on a report, as the API sends it (the workflow's decide signal). */
export interface ReportDecision {
  approve: boolean;
  /** The API key that decided: the origin of the events the decision records. */
  actor: Actor;
  /** The approving or rejecting employee, when the decision names one. */
  employeeId: string | null;
  /** Approval notes, or the reason of a rejection. */
  notes: string | null;
  /** The id of report.completion_approved, when the decision records it. */
  eventId: string;
}

/** How the workflow ended: the decision taken, or cancelled when the report no longer exists. */
export interface ReportApprovalResult {
  outcome: Exclude<ApprovalStatus, 'pending'> | 'cancelled';
  /** The id of the event the decision recorded (report.completion_approved), or null. */
  eventId: string | null;
}

export const DECIDE_SIGNAL_DESCRIPTION =
  'Approve or reject this report: {"approve": true|false, "actor": {"companyId", "apiKeyId"}, "employeeId": null, "notes": null, "eventId": "<uuid>"}. ' +
  'The REST routes POST /daily-reports/{id}/approve, /reject (and the same for completion reports) send it; the first decision counts.';
