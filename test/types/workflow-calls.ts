/*
 * Type tests, checked by `tsc --noEmit` (npm test) and never run: each @ts-expect-error is a mistake the compiler
 * catches in a call to a workflow through WorkflowGateway, typed from the workflow's contract. Should a line compile,
 * its @ts-expect-error is unused, and that is an error too.
 */
import type { WorkflowGateway, WorkflowStart } from '../../src/domain/workflow-gateway';
import { PROJECT_CLOSING } from '../../workflows/project-closing.contract';
import { PURCHASE_ORDER_APPROVAL, type PurchaseOrderDecided, type PurchaseOrderDecision } from '../../workflows/purchase-order-approval.contract';
import { REPORT_APPROVAL, type ReportDecision } from '../../workflows/report-approval.contract';
import { WEBHOOK_DELIVERY } from '../../workflows/webhook-delivery.contract';

declare const workflows: WorkflowGateway;
declare const reportDecision: ReportDecision;
declare const poDecision: PurchaseOrderDecision;

const actor = { companyId: 'c', apiKeyId: 'k' };
const labels = { companyId: 'c', eventType: 'project.closed', recordKey: 'P-1' };
const run = { workflowId: 'w', whenOpen: 'join', afterClosed: 'start', labels, summary: 's' } as const;
const closing = { actor, eventId: 'e', projectId: 'p', projectCode: 'P-1', closeWorkOrders: false };
const reportRun: WorkflowStart<typeof REPORT_APPROVAL> = { ...run, workflow: REPORT_APPROVAL, input: { companyId: 'c', kind: 'daily', reportId: 'r', deadlineMs: 1 } };
const poRun: WorkflowStart<typeof PURCHASE_ORDER_APPROVAL> = { ...run, workflow: PURCHASE_ORDER_APPROVAL, input: { companyId: 'c', purchaseOrderId: 'p', deadlineMs: 1 } };

export async function rightCalls() {
  const closed = await workflows.startAndAwait({ ...run, workflow: PROJECT_CLOSING, input: closing }, 1);
  if (closed.finished) closed.result.closedWorkOrders satisfies number;
  await workflows.signalAndAwait(reportRun, REPORT_APPROVAL.signals.decide, [reportDecision], 1);
  const decided = await workflows.update(poRun, PURCHASE_ORDER_APPROVAL.updates.decide, [poDecision], 1);
  decided?.result satisfies PurchaseOrderDecided | undefined;
}

export async function wrongInput() {
  // @ts-expect-error the input of projectClosing lacks closeWorkOrders
  await workflows.start({ ...run, workflow: PROJECT_CLOSING, input: { actor, eventId: 'e', projectId: 'p', projectCode: 'P-1' } });
  // @ts-expect-error a report approval's input given to projectClosing
  await workflows.start({ ...run, workflow: PROJECT_CLOSING, input: reportRun.input });
}

export async function wrongResult() {
  const closed = await workflows.startAndAwait({ ...run, workflow: PROJECT_CLOSING, input: closing }, 1);
  // @ts-expect-error projectClosing's result has no outcome
  if (closed.finished) void closed.result.outcome;
}

export async function unknownSignal() {
  // @ts-expect-error reportApproval takes no signal "approve"
  await workflows.signalAndAwait(reportRun, REPORT_APPROVAL.signals.approve, [reportDecision], 1);
  // @ts-expect-error a signal of another workflow (webhookDelivery's endpointReady)
  await workflows.signalAndAwait(reportRun, WEBHOOK_DELIVERY.signals.endpointReady, [], 1);
  // @ts-expect-error an update is not a signal
  await workflows.signalAndAwait(poRun, PURCHASE_ORDER_APPROVAL.updates.decide, [poDecision], 1);
}

export async function wrongSignalArgs() {
  // @ts-expect-error decide is sent with a ReportDecision
  await workflows.signalAndAwait(reportRun, REPORT_APPROVAL.signals.decide, [poDecision], 1);
  // @ts-expect-error decide is sent with one argument
  await workflows.signalAndAwait(reportRun, REPORT_APPROVAL.signals.decide, [], 1);
}

export async function unknownUpdate() {
  // @ts-expect-error purchaseOrderApproval takes no update "approve"
  await workflows.update(poRun, PURCHASE_ORDER_APPROVAL.updates.approve, [poDecision], 1);
  // @ts-expect-error an update of another workflow (webhookDelivery's rerun)
  await workflows.update(poRun, WEBHOOK_DELIVERY.updates.rerun, [{}], 1);
  // @ts-expect-error a signal is not an update
  await workflows.update(reportRun, REPORT_APPROVAL.signals.decide, [reportDecision], 1);
}

export async function wrongUpdateArgs() {
  // @ts-expect-error decide is sent with a PurchaseOrderDecision
  await workflows.update(poRun, PURCHASE_ORDER_APPROVAL.updates.decide, [reportDecision], 1);
  const decided = await workflows.update(poRun, PURCHASE_ORDER_APPROVAL.updates.decide, [poDecision], 1);
  // @ts-expect-error decide answers a status, not a number
  decided?.result satisfies number | undefined;
}
