import { allHandlersFinished, ApplicationFailure, condition, proxyActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { PurchaseOrderApprovalActivities } from '../activities/purchase-order-approval';
import { APPROVAL_STATUS } from './search-attributes';
import { temporalUpdate } from './messages';
import { DECIDE_UPDATE_DESCRIPTION, PURCHASE_ORDER_APPROVAL, type PurchaseOrderApprovalInput, type PurchaseOrderApprovalResult } from './purchase-order-approval.contract';

const steps = proxyActivities<PurchaseOrderApprovalActivities>({
  startToCloseTimeout: '30 seconds',
  // Bounded like every activity here; a refused decision fails its update at once (non-retryable).
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 12 },
});

/**
 * Purchase order approval: one workflow per submitted purchase order. Each decide update records one
 * approver's decision; a rejection ends it, the last approval approves the purchase order. When the deadline
 * passes with approvals missing it escalates once (the company's top approval role may then give them all)
 * and keeps waiting. ApprovalStatus shows pending, escalated, then approved or rejected.
 */
export async function purchaseOrderApproval(input: PurchaseOrderApprovalInput): Promise<PurchaseOrderApprovalResult> {
  let outcome: PurchaseOrderApprovalResult['outcome'] | undefined;
  setHandler(
    temporalUpdate(PURCHASE_ORDER_APPROVAL.updates.decide),
    async (decision) => {
      const status = await steps.recordPurchaseOrderDecision(input, decision);
      if (status === 'approved' || status === 'rejected') outcome = status;
      return status;
    },
    {
      validator: (_decision) => {
        if (outcome) throw ApplicationFailure.create({ type: 'CONFLICT', message: `The purchase order is ${outcome} already`, details: [{ field: 'status', reason: `is ${outcome}` }] });
      },
      description: DECIDE_UPDATE_DESCRIPTION,
    },
  );
  if (!(await steps.purchaseOrderAwaitsApproval(input))) outcome = 'cancelled';
  if (!(await condition(() => outcome !== undefined, input.deadlineMs))) {
    upsertSearchAttributes([{ key: APPROVAL_STATUS, value: 'escalated' }]);
    await steps.escalatePurchaseOrderApproval(input);
    await condition(() => outcome !== undefined);
  }
  // A decision still being recorded answers its sender before the workflow ends.
  await condition(allHandlersFinished);
  upsertSearchAttributes([{ key: APPROVAL_STATUS, value: outcome! }]);
  return { outcome: outcome! };
}
