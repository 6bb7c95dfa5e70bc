import { condition, proxyActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { ReportApprovalActivities } from '../activities/report-approval';
import { APPROVAL_STATUS } from './search-attributes';
import { temporalSignal } from './messages';
import { DECIDE_SIGNAL_DESCRIPTION, REPORT_APPROVAL, type ReportApprovalInput, type ReportApprovalResult, type ReportDecision } from './report-approval.contract';

const steps = proxyActivities<ReportApprovalActivities>({
  startToCloseTimeout: '30 seconds',
  // Bounded like every activity here: a database outage of a few minutes is ridden out.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 12 },
});

/**
 * Report approval: one workflow per report that needs it. It waits for the decide signal; each time the
 * approval deadline passes it reminds (a log alert and reminders_sent) and keeps waiting, shown as overdue in
 * the ApprovalStatus search attribute. The decision is applied in one step: the report approved or rejected,
 * and for an approved completion report, report.completion_approved and the work order completed.
 */
export async function reportApproval(input: ReportApprovalInput): Promise<ReportApprovalResult> {
  let decision: ReportDecision | undefined;
  setHandler(temporalSignal(REPORT_APPROVAL.signals.decide), (request) => void (decision ??= request), { description: DECIDE_SIGNAL_DESCRIPTION });
  const result = await awaitDecision(input, () => decision);
  upsertSearchAttributes([{ key: APPROVAL_STATUS, value: result.outcome }]);
  return result;
}

/** Cancelled when the report is not (or no longer) there: never recorded, or deleted with its work order. */
async function awaitDecision(input: ReportApprovalInput, decision: () => ReportDecision | undefined): Promise<ReportApprovalResult> {
  const cancelled: ReportApprovalResult = { outcome: 'cancelled', eventId: null };
  if (!(await steps.reportAwaitsApproval(input))) return cancelled;
  for (let reminder = 1; !(await condition(() => decision() !== undefined, input.deadlineMs)); reminder++) {
    upsertSearchAttributes([{ key: APPROVAL_STATUS, value: 'overdue' }]);
    if (!(await steps.remindReportApproval(input, reminder))) return cancelled;
  }
  return steps.decideReport(input, decision()!);
}
