import { defineUpdate } from '@temporalio/workflow';
import type { Actor } from '../src/domain/accounts/actor';
import type { PurchaseOrderStatus } from '../src/domain/supply/purchase-order.entity';

/** An approver's decision on a purchase order, as the API sends it. */
export interface PurchaseOrderDecision {
  approve: boolean;
  /** The deciding employee: one of the required approvers of a role still open, or of the escalation role. */
  approverId: string;
  /** Approval notes, or the reason of a rejection. */
  notes: string | null;
  /** The API key that sent it: the origin of the events it records. */
  actor: Actor;
}

/**
 * Approves or rejects for the approver's roles; answers the purchase order's status after it (still
 * pending_approval until the last approval), or fails with the refusal (409, 400) when the decision cannot be
 * taken. Sent by POST /purchase-orders/{id}/approve and /reject.
 */
export const decidePurchaseOrderUpdate = defineUpdate<PurchaseOrderStatus, [PurchaseOrderDecision]>('decide');

export const DECIDE_UPDATE_DESCRIPTION =
  'An approver approves or rejects this purchase order: {"approve": true|false, "approverId": "<employee id>", "notes": null, "actor": {"companyId", "apiKeyId"}}. ' +
  'A rejection ends the approval; the last approval approves the purchase order.';
