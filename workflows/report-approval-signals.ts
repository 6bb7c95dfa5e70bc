import { defineSignal } from '@temporalio/workflow';
import type { Actor } from '../src/domain/accounts/actor';

/** A manager's decision on a report, as the API sends it. */
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

/**
 * Approves or rejects the report. The first decision counts; later ones are ignored (the API refuses them
 * with 409). Sent by the REST approve and reject routes and inbound report.completion_approved.
 */
export const decideReportSignal = defineSignal<[ReportDecision]>('decide');

export const DECIDE_SIGNAL_DESCRIPTION =
  'Approve or reject this report: {"approve": true|false, "actor": {"companyId", "apiKeyId"}, "employeeId": null, "notes": null, "eventId": "<uuid>"}. ' +
  'The REST routes POST /daily-reports/{id}/approve, /reject (and the same for completion reports) send it; the first decision counts.';
