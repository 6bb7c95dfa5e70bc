import type { Actor } from '../src/domain/accounts/actor';
import type { PurchaseOrderStatus } from '../src/domain/supply/purchase-order.entity';
import { update, workflowDef } from '../src/domain/workflow-contract';

/**
 * Purchase order approval, one run per submitted purchase order (id `po-approval/<purchase order id>`), on the
 * operations task queue. Started by submitPurchaseOrder and decidePurchaseOrder (src/domain/supply/purchase-order-approval.ts).
 * Its update `decide` approves or rejects for the approver's roles; it answers the purchase order's status after it
 * (still pending_approval until the last approval), or fails with the refusal (409, 400) when the decision cannot be
 * taken. Sent by POST /purchase-orders/{id}/approve and /reject.
 */
export const PURCHASE_ORDER_APPROVAL = workflowDef<PurchaseOrderApprovalInput, PurchaseOrderApprovalResult>()({
  name: 'purchaseOrderApproval',
  taskQueue: 'operations',
  updates: { decide: update<[PurchaseOrderDecision], PurchaseOrderDecided>() },
});

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

/** An approver's decision on a purchase order, as the API sends it (the workflow's decide update). */
export interface PurchaseOrderDecision {
  approve: boolean;
  /** The deciding employee: one of the required approvers of a role still open, or of the escalation role. */
  approverId: string;
  /** Approval notes, or the reason of a rejection. */
  notes: string | null;
  /** The API key that sent it: the origin of the events it records. */
  actor: Actor;
}

/** The decide update answers with the purchase order's status after the decision. */
export type PurchaseOrderDecided = PurchaseOrderStatus;

export const DECIDE_UPDATE_DESCRIPTION =
  'An approver approves or rejects this purchase order: {"approve": true|false, "approverId": "<employee id>", "notes": null, "actor": {"companyId", "apiKeyId"}}. ' +
  'A rejection ends the approval; the last approval approves the purchase order.';
