import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../errors';
import { recordEvent } from '../../events/outbox';
import { poSubmittedData } from './purchase-order-events';
import type { PurchaseOrder as PurchaseOrderRecord } from '../../generated/schemas';
import { type ApprovalRuntime, WorkflowAlreadyStarted, type WorkflowStart } from '../workflow-gateway';
import { PURCHASE_ORDER_APPROVAL, type PurchaseOrderApprovalInput, type PurchaseOrderDecision } from '../../../workflows/purchase-order-approval.contract';
import type { Actor } from '../accounts/actor';
import { lockNaturalKey } from '../natural-keys';
import { lifecycleActor } from '../time/timesheet-lifecycle';
import { amountsOf } from './po-amounts';
import { ApprovalThreshold, type RequiredApprover } from './purchase-order.entity';
import { purchaseOrders } from './purchase-orders';

export const purchaseOrderApprovalWorkflowId = (purchaseOrderId: string) => `po-approval/${purchaseOrderId}`;

const approvalRun = (input: PurchaseOrderApprovalInput, poNumber: string, afterClosed: WorkflowStart['afterClosed']): WorkflowStart<typeof PURCHASE_ORDER_APPROVAL> => ({
  workflow: PURCHASE_ORDER_APPROVAL,
  workflowId: purchaseOrderApprovalWorkflowId(input.purchaseOrderId),
  input,
  whenOpen: 'refuse',
  afterClosed,
  labels: { companyId: input.companyId, eventType: 'po.submitted', recordKey: poNumber, approvalStatus: 'pending' },
  summary: `Purchase order ${poNumber} waits for approval`,
  details: `Purchase order ${input.purchaseOrderId} of company ${input.companyId}. Approvers decide with POST /purchase-orders/{id}/approve or /reject.`,
});

const conflict = (field: string | null, message: string, reason: string) => new ApiError('CONFLICT', message, { field, reason });

/**
 * The approvers a total needs (webhooks.md 6.2 required_approvers): the company's thresholds ordered by limit
 * (no limit last) are an escalation chain, and every role whose limit is below the total must approve, up to
 * and including the first whose limit covers it. Each such role is listed with every employee holding it (any
 * one of them approves for the role).
 */
export async function requiredApproversFor(em: EntityManager, companyId: string, total: number, currency: string): Promise<RequiredApprover[]> {
  const thresholds = (await em.find(ApprovalThreshold, { company: companyId })).sort((a, b) => (a.maxAmount ?? Infinity) - (b.maxAmount ?? Infinity));
  const coverIndex = thresholds.findIndex((t) => t.maxAmount === null || t.maxAmount >= total);
  if (coverIndex < 0) {
    const reason = thresholds.length ? `the highest limit is ${thresholds.at(-1)!.maxAmount}` : 'the company has no approval thresholds';
    throw conflict(null, `No role may approve ${total} ${currency}: ${reason}. Add an approval threshold that covers it.`, 'no approval threshold covers the total');
  }
  const approvers: RequiredApprover[] = [];
  for (const threshold of thresholds.slice(0, coverIndex + 1)) {
    const holders = await em.execute<{ id: string; name: string }[]>(
      'select e.id, e.name from employees e join roles r on r.id = e.role_id where e.company_id = ? and lower(r.name) = lower(?) order by e.created_at, e.id',
      [companyId, threshold.roleName],
    );
    if (!holders.length) throw conflict(null, `No employee holds the role "${threshold.roleName}", whose approval ${total} ${currency} needs`, `no employee holds ${threshold.roleName}`);
    approvers.push(...holders.map((e) => ({ id: e.id, name: e.name, role: threshold.roleName, approval_threshold: threshold.maxAmount })));
  }
  return approvers;
}

/**
 * Submits a draft: its required approvers and deadline are fixed, po.submitted is recorded, and its
 * purchaseOrderApproval workflow is started before the transaction commits (the workflow's first step waits
 * for it, and ends when it rolled back).
 */
export async function submitPurchaseOrder(em: EntityManager, runtime: ApprovalRuntime, actor: Actor, id: string): Promise<PurchaseOrderRecord> {
  return em.transactional(async (tx) => {
    const po = await purchaseOrders.loadForUpdate(tx, actor.companyId, id);
    if (po.status !== 'draft') throw conflict('status', `Purchase order ${po.poNumber} is ${po.status}: only a draft can be submitted`, `is ${po.status}`);
    if (po.lineItems.length === 0) throw conflict('line_items', `Purchase order ${po.poNumber} has no line items to approve`, 'is empty');
    const approvers = await requiredApproversFor(tx, actor.companyId, amountsOf(po).total, po.currency);
    const who = await lifecycleActor(tx, actor);
    const input = { companyId: actor.companyId, purchaseOrderId: po.id, deadlineMs: runtime.deadlineMs };
    Object.assign(po, {
      status: 'pending_approval',
      submittedAt: who.at,
      requiredApprovers: approvers,
      approvalDeadline: new Date(who.at.getTime() + runtime.deadlineMs),
      workflowId: purchaseOrderApprovalWorkflowId(po.id),
    });
    await tx.flush();
    recordEvent(tx, actor, 'po.submitted', { b: poSubmittedData(po, who, approvers) });
    await lockNaturalKey(tx, 'po-approval', po.id);
    await runtime.workflows.start(approvalRun(input, po.poNumber, 'start'));
    return purchaseOrders.get(tx, actor.companyId, id);
  });
}

/**
 * One approver's decision, sent to the purchase order's workflow as an update (started again first if an
 * operator terminated it), answered when the workflow has recorded it. A worker that does not take it within
 * `runtime.waitMs` is a 503; sending the decision again is safe, since an approver's decision is recorded once.
 */
export async function decidePurchaseOrder(em: EntityManager, runtime: ApprovalRuntime, id: string, decision: PurchaseOrderDecision): Promise<PurchaseOrderRecord> {
  const { companyId } = decision.actor;
  const record = await purchaseOrders.get(em, companyId, id);
  if (record.status !== 'pending_approval') {
    throw conflict('status', `Purchase order ${record.po_number} is ${record.status}: only one pending approval can be decided`, `is ${record.status}`);
  }
  const input = { companyId, purchaseOrderId: id, deadlineMs: runtime.deadlineMs };
  let answer;
  try {
    answer = await runtime.workflows.update(approvalRun(input, record.po_number, 'start_if_failed'), PURCHASE_ORDER_APPROVAL.updates.decide, [decision], runtime.waitMs);
  } catch (error) {
    // The workflow completed between our read and the update: another decision ended it.
    if (error instanceof WorkflowAlreadyStarted) return conflictWithCurrent(em, companyId, id);
    throw error;
  }
  // A worker may still take it later; the decision is recorded once however often it arrives.
  if (!answer) {
    throw new ApiError('SERVICE_UNAVAILABLE', 'No worker took the decision in time; send it again (it is recorded once)', { field: null, reason: 'no worker available' }, { 'Retry-After': '5' });
  }
  return purchaseOrders.get(em, companyId, id);
}

async function conflictWithCurrent(em: EntityManager, companyId: string, id: string): Promise<never> {
  const now = await purchaseOrders.get(em, companyId, id);
  throw conflict('status', `Purchase order ${now.po_number} is ${now.status} already`, `is ${now.status}`);
}
