import { defineSignal } from '@temporalio/workflow';
import type { ReportApprovalInput, ReportApprovalResult, ReportDecision } from '../src/domain/reporting/report-approval';
import type { TaskQueueRole } from '../src/task-queues';

export type { ReportApprovalInput, ReportApprovalResult, ReportDecision };

/**
 * Report approval, one run per report that needs it (id: the report's workflow_id), on the operations task queue.
 * Started by submitReport and decideReport (src/domain/reporting/report-approval.ts).
 */
export const REPORT_APPROVAL = 'reportApproval';

/** The task queue it and its activities run on (TEMPORAL_OPERATIONS_TASK_QUEUE names it). */
export const REPORT_APPROVAL_TASK_QUEUE: TaskQueueRole = 'operations';

/**
 * Approves or rejects the report. The first decision counts; later ones are ignored (the API refuses them
 * with 409). Sent by the REST approve and reject routes and inbound report.completion_approved.
 */
export const decideReportSignal = defineSignal<[ReportDecision]>('decide');

export const DECIDE_SIGNAL_DESCRIPTION =
  'Approve or reject this report: {"approve": true|false, "actor": {"companyId", "apiKeyId"}, "employeeId": null, "notes": null, "eventId": "<uuid>"}. ' +
  'The REST routes POST /daily-reports/{id}/approve, /reject (and the same for completion reports) send it; the first decision counts.';
