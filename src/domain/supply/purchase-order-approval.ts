import type { EntityManager } from '@mikro-orm/postgresql';
import { WithStartWorkflowOperation, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { setTimeout as delay } from 'node:timers/promises';
import type { purchaseOrderApproval } from '../../../workflows';
import { decidePurchaseOrderUpdate, type PurchaseOrderDecision } from '../../../workflows/purchase-order-approval-updates';
import { ApiError } from '../../errors';
import { recordEvent } from '../../events/outbox';
import { poSubmittedData } from '../../events/payloads/purchase-orders';
import type { PurchaseOrder as PurchaseOrderRecord } from '../../generated/schemas';
import type { ApprovalRuntime } from '../../temporal/approval-runtime';
import { apiErrorFromWorkflow } from '../../temporal/failures';
import { APPROVAL_STATUS, COMPANY_ID, EVENT_TYPE, RECORD_KEY } from '../../temporal/search-attributes';
import type { Actor } from '../accounts/actor';
import { lockNaturalKey } from '../natural-keys';
import { lifecycleActor } from '../time/timesheet-lifecycle';
import { amountsOf } from './po-amounts';
import { ApprovalThreshold, type RequiredApprover } from './purchase-order.entity';
import { purchaseOrders } from './purchase-orders';

/** Input of the purchaseOrderApproval workflow. */
export interface PurchaseOrderApprovalInput {
  companyId: string;
  purchaseOrderId: string;
  /** When to escalate; injected so tests wait seconds. */
  deadlineMs: number;
}

export interface PurchaseOrderApprovalResult {
  /** cancelled: the purchase order was never recorded as submitted (its transaction rolled back). */
  outcome: 'approved' | 'rejected' | 'cancelled';
}

export const purchaseOrderApprovalWorkflowId = (purchaseOrderId: string) => `po-approval/${purchaseOrderId}`;

const workflowOptions = (runtime: ApprovalRuntime, input: PurchaseOrderApprovalInput, poNumber: string) => ({
  taskQueue: runtime.taskQueue,
  workflowId: purchaseOrderApprovalWorkflowId(input.purchaseOrderId),
  args: [input] as [PurchaseOrderApprovalInput],
  typedSearchAttributes: [
    { key: COMPANY_ID, value: input.companyId },
    { key: EVENT_TYPE, value: 'po.submitted' },
    { key: RECORD_KEY, value: poNumber },
    { key: APPROVAL_STATUS, value: 'pending' },
  ],
  staticSummary: `Purchase order ${poNumber} waits for approval`,
  staticDetails: `Purchase order ${input.purchaseOrderId} of company ${input.companyId}. Approvers decide with POST /purchase-orders/{id}/approve or /reject.`,
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
    await runtime.temporal.workflow.start<typeof purchaseOrderApproval>('purchaseOrderApproval', workflowOptions(runtime, input, po.poNumber));
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
  const update = runtime.temporal.workflow.executeUpdateWithStart(decidePurchaseOrderUpdate, {
    args: [decision],
    startWorkflowOperation: new WithStartWorkflowOperation<typeof purchaseOrderApproval>('purchaseOrderApproval', {
      ...workflowOptions(runtime, input, record.po_number),
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
    }),
  });
  const timer = new AbortController();
  try {
    const applied = await Promise.race([update.then(() => true), delay(runtime.waitMs, false, { signal: timer.signal })]);
    if (!applied) {
      // A worker may still take it later; the decision is recorded once however often it arrives.
      update.catch(() => undefined);
      throw new ApiError('SERVICE_UNAVAILABLE', 'No worker took the decision in time; send it again (it is recorded once)', { field: null, reason: 'no worker available' }, { 'Retry-After': '5' });
    }
  } catch (error) {
    // The workflow completed between our read and the update: another decision ended it.
    if (error instanceof WorkflowExecutionAlreadyStartedError) return conflictWithCurrent(em, companyId, id);
    throw apiErrorFromWorkflow(error);
  } finally {
    timer.abort();
  }
  return purchaseOrders.get(em, companyId, id);
}

async function conflictWithCurrent(em: EntityManager, companyId: string, id: string): Promise<never> {
  const now = await purchaseOrders.get(em, companyId, id);
  throw conflict('status', `Purchase order ${now.po_number} is ${now.status} already`, `is ${now.status}`);
}
