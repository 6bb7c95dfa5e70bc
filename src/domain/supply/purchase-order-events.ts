import type { ChangeContext } from '../records/record-service';
import { amountsOf, lineTotal, linesOf } from './po-amounts';
import type { ApprovalDecision, PurchaseOrder, PurchaseOrderAttachment, Receipt, RequiredApprover } from './purchase-order.entity';
import type {
  CatalogPoApprovedData,
  CatalogPoAttachmentAddedData,
  CatalogPoAttachmentRemovedData,
  CatalogPoCreatedData,
  CatalogPoReceivedData,
  CatalogPoRejectedData,
  CatalogPoSubmittedData,
  CatalogPoUpdatedData,
  PoLineItem,
  PurchaseOrder as PurchaseOrderRecord,
} from '../../generated/schemas';
import { changesBetween } from '../../events/changes';
import { iso, namedStamp } from '../event-format';

/*
 * Purchase order events (6.2 po.*). They read the purchase order with its vendor, project and line items
 * loaded. *_by is the API key that acted, *_by_name its name; an approval's or rejection's is the employee's.
 */

/** Who acted, by id and name, and when. */
export interface Acting {
  by: string;
  byName: string;
  at: Date;
}

const lineItem = (item: PurchaseOrderRecord['line_items'][number]): PoLineItem => ({
  id: item.id,
  description: item.description,
  quantity: item.quantity,
  unit_price: item.unit_price,
  total: item.total,
  category: item.category,
});

const about = (po: PurchaseOrder) => ({ id: po.id, po_number: po.poNumber, vendor_id: po.vendor.id, vendor_name: po.vendor.getEntity().name, project_id: po.project.id });

/** The fields every po.* event but the attachment ones leads with (those of po.created). */
export function poBase(po: PurchaseOrder): CatalogPoCreatedData {
  const { subtotal, total } = amountsOf(po);
  return {
    ...about(po),
    project_name: po.project.getEntity().name,
    status: po.status,
    created_by: po.createdBy,
    created_by_name: po.createdByName,
    not_to_exceed_amount: po.notToExceedAmount,
    currency: po.currency,
    line_items: linesOf(po).map((item) => ({ id: item.id, description: item.description, quantity: item.quantity, unit_price: item.unitPrice, total: lineTotal(item), category: item.category })),
    subtotal,
    tax: po.tax,
    total_amount: total,
    notes: po.notes,
    delivery_date: po.deliveryDate,
    payment_terms: po.paymentTerms,
  };
}

/** Fields whose change `changes` does not list as {from, to}: line items have their own form, the rest cannot change by an update. */
const NOT_COMPARED = ['line_items', 'approval_workflow', 'receipts', 'created_by', 'created_by_name'];
const compared = (record: PurchaseOrderRecord) => Object.fromEntries(Object.entries(record).filter(([field]) => !NOT_COMPARED.includes(field)));

/** changes.line_items: added and removed items, and those kept whose fields differ (as they are now). */
function lineItemChanges(before: PurchaseOrderRecord, after: PurchaseOrderRecord) {
  const was = new Map(before.line_items.map((item) => [item.id, lineItem(item)]));
  const now = after.line_items.map(lineItem);
  const added = now.filter((item) => !was.has(item.id));
  const removed = [...was.values()].filter((item) => !now.some((n) => n.id === item.id));
  const modified = now.filter((item) => was.has(item.id) && JSON.stringify(was.get(item.id)) !== JSON.stringify(item));
  return added.length || removed.length || modified.length ? { line_items: { added, removed, modified } } : {};
}

export function poUpdatedData(po: PurchaseOrder, change: { before: PurchaseOrderRecord; after: PurchaseOrderRecord }, ctx: ChangeContext): CatalogPoUpdatedData {
  return {
    ...about(po),
    status: po.status,
    not_to_exceed_amount: po.notToExceedAmount,
    total_amount: amountsOf(po).total,
    updated_by: ctx.actor.apiKeyId,
    updated_by_name: ctx.actorName!,
    changes: { ...changesBetween(compared(change.before), compared(change.after), 'B'), ...lineItemChanges(change.before, change.after) } as CatalogPoUpdatedData['changes'],
  };
}

export const poSubmittedData = (po: PurchaseOrder, who: Acting, approvers: RequiredApprover[]): CatalogPoSubmittedData => ({
  ...poBase(po),
  ...namedStamp('submitted', who),
  approval_workflow: { required_approvers: approvers, approval_deadline: iso(po.approvalDeadline) },
});

export const poApprovedData = (po: PurchaseOrder, approver: { id: string; name: string }, notes: string | null): CatalogPoApprovedData => ({
  ...poBase(po),
  approved_by: approver.id,
  approved_by_name: approver.name,
  approved_at: po.approvedAt!.toISOString(),
  approval_notes: notes,
  approval_workflow: { approvers: po.decisions.map((d) => ({ id: d.id, name: d.name, role: d.role, approved_at: d.decided_at, decision: d.decision })) },
});

/** The decisions taken, then the required approvers of the roles no one decided for, as pending. */
export function poRejectedData(po: PurchaseOrder, rejecter: { id: string; name: string }): CatalogPoRejectedData {
  const decided = (d: ApprovalDecision) => ({ id: d.id, name: d.name, role: d.role, rejected_at: d.decision === 'rejected' ? d.decided_at : null, decision: d.decision });
  const decidedRoles = new Set(po.decisions.map((d) => d.role));
  const pending = (po.requiredApprovers ?? []).filter((a) => !decidedRoles.has(a.role)).map((a) => ({ id: a.id, name: a.name, role: a.role, rejected_at: null, decision: 'pending' }));
  return {
    ...poBase(po),
    rejected_by: rejecter.id,
    rejected_by_name: rejecter.name,
    rejected_at: po.rejectedAt!.toISOString(),
    rejection_reason: po.rejectionReason,
    approval_workflow: { approvers: [...po.decisions.map(decided), ...pending] },
  };
}

export function poReceivedData(po: PurchaseOrder, receipt: Receipt, who: Acting): CatalogPoReceivedData {
  const lines = new Map(po.lineItems.getItems().map((item) => [item.id, item]));
  return {
    ...poBase(po),
    received_by: who.by,
    received_by_name: who.byName,
    received_at: receipt.received_at,
    receipt_location: receipt.receipt_location,
    received_items: receipt.received_items.map((r) => ({
      line_item_id: r.line_item_id,
      description: lines.get(r.line_item_id)!.description,
      quantity_ordered: lines.get(r.line_item_id)!.quantity,
      quantity_received: r.quantity_received,
      condition: r.condition,
      notes: r.notes,
    })),
    receipt_notes: receipt.receipt_notes,
  };
}

export const poAttachmentAddedData = (po: PurchaseOrder, attachment: PurchaseOrderAttachment, downloadUrl: string): CatalogPoAttachmentAddedData => ({
  ...about(po),
  attachment: {
    id: attachment.id,
    filename: attachment.filename,
    file_size: attachment.fileSize,
    file_type: attachment.fileType,
    category: attachment.category,
    uploaded_by: attachment.uploadedBy,
    uploaded_by_name: attachment.uploadedByName,
    uploaded_at: attachment.createdAt.toISOString(),
    download_url: downloadUrl,
    notes: attachment.notes,
  },
});

export const poAttachmentRemovedData = (po: PurchaseOrder, attachment: PurchaseOrderAttachment, who: Acting, reason: string | null): CatalogPoAttachmentRemovedData => ({
  ...about(po),
  attachment: {
    id: attachment.id,
    filename: attachment.filename,
    file_type: attachment.fileType,
    ...namedStamp('removed', who),
    removal_reason: reason,
  },
});
