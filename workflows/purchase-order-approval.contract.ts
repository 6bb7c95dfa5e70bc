import { defineUpdate } from '@temporalio/workflow';
import type {
  PurchaseOrderApprovalInput,
  PurchaseOrderApprovalResult,
  PurchaseOrderDecided,
  PurchaseOrderDecision,
} from '../src/domain/supply/purchase-order-approval';
import type { TaskQueueRole } from '../src/task-queues';

export type { PurchaseOrderApprovalInput, PurchaseOrderApprovalResult, PurchaseOrderDecided, PurchaseOrderDecision };

/**
 * Purchase order approval, one run per submitted purchase order (id `po-approval/<purchase order id>`), on the
 * operations task queue. Started by submitPurchaseOrder and decidePurchaseOrder (src/domain/supply/purchase-order-approval.ts).
 */
export const PURCHASE_ORDER_APPROVAL = 'purchaseOrderApproval';

/** The task queue it and its activities run on (TEMPORAL_OPERATIONS_TASK_QUEUE names it). */
export const PURCHASE_ORDER_APPROVAL_TASK_QUEUE: TaskQueueRole = 'operations';

/**
 * Approves or rejects for the approver's roles; answers the purchase order's status after it (still
 * pending_approval until the last approval), or fails with the refusal (409, 400) when the decision cannot be
 * taken. Sent by POST /purchase-orders/{id}/approve and /reject.
 */
export const decidePurchaseOrderUpdate = defineUpdate<PurchaseOrderDecided, [PurchaseOrderDecision]>('decide');

export const DECIDE_UPDATE_DESCRIPTION =
  'An approver approves or rejects this purchase order: {"approve": true|false, "approverId": "<employee id>", "notes": null, "actor": {"companyId", "apiKeyId"}}. ' +
  'A rejection ends the approval; the last approval approves the purchase order.';
