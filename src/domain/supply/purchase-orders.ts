import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../errors';
import { iso } from '../event-format';
import { poBase, poUpdatedData } from './purchase-order-events';
import type { PoLineItemInput, PurchaseOrderCreate, PurchaseOrder as PurchaseOrderRecord, PurchaseOrderUpdate } from '../../generated/schemas';
import { RecordService } from '../records/record-service';
import type { FieldMapping, WriteContext } from '../records/wire-mapping';
import { Project } from '../work/project.entity';
import { amountsOf, lineTotal, linesOf } from './po-amounts';
import { PurchaseOrder, PurchaseOrderLineItem } from './purchase-order.entity';
import { Vendor } from './vendor.entity';

/** ISO 4217 codes, as this runtime's ICU knows them. */
export const CURRENCIES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));

/** Next per-company number (PO-000001, …), taken under the company row's lock; numbers a sender chose are skipped. */
async function nextPoNumber(em: EntityManager, companyId: string): Promise<string> {
  for (let tries = 0; tries < 1000; tries++) {
    const [row] = await em.execute<{ purchase_order_sequence: number }[]>(
      'update companies set purchase_order_sequence = purchase_order_sequence + 1 where id = ? returning purchase_order_sequence',
      [companyId],
    );
    const number = `PO-${String(row!.purchase_order_sequence).padStart(6, '0')}`;
    if ((await em.count(PurchaseOrder, { company: companyId, poNumber: { $ilike: number } })) === 0) return number;
  }
  throw new Error(`No free purchase order number for company ${companyId}`);
}

/**
 * `line_items` is the whole list: an item with an id keeps its identity, one without is added, and those left
 * out are removed (webhooks.md 6.2: po.updated lists them as added, removed and modified).
 */
function writeLineItems(po: PurchaseOrder, value: unknown, { field }: WriteContext): void {
  const existing = new Map(po.lineItems.getItems().map((item) => [item.id, item]));
  const kept = new Set<PurchaseOrderLineItem>();
  for (const [position, input] of (value as PoLineItemInput[]).entries()) {
    let item: PurchaseOrderLineItem;
    if (input.id !== undefined) {
      const found = existing.get(input.id.toLowerCase());
      if (!found) throw ApiError.invalid(`${field}[${position}].id`, 'does not match a line item of this purchase order');
      if (kept.has(found)) throw ApiError.invalid(`${field}[${position}].id`, 'names a line item given before in the list');
      item = found;
    } else {
      item = new PurchaseOrderLineItem();
      item.company = po.company;
      po.lineItems.add(item);
    }
    item.position = position;
    if (input.description !== undefined) item.description = input.description.trim();
    if (input.quantity !== undefined) item.quantity = input.quantity;
    if (input.unit_price !== undefined) item.unitPrice = input.unit_price;
    if (input.category !== undefined) item.category = input.category;
    kept.add(item);
  }
  for (const item of existing.values()) if (!kept.has(item)) po.lineItems.remove(item);
}

const read = (get: (po: PurchaseOrder) => unknown): FieldMapping<PurchaseOrder> => ({ read: (view) => get(view as unknown as PurchaseOrder) });

/** The approval as the record shows it: set once submitted. */
const approvalWorkflow = (po: PurchaseOrder) =>
  po.workflowId && {
    workflow_id: po.workflowId,
    required_approvers: po.requiredApprovers ?? [],
    approval_deadline: iso(po.approvalDeadline)!,
    escalated_at: iso(po.escalatedAt),
    escalated_to_role: po.escalatedToRole,
    decisions: po.decisions,
  };

/** 409 naming the status unless the purchase order is a draft: submitted ones change only through their lifecycle. */
function assertDraft(po: PurchaseOrder): void {
  if (po.status !== 'draft') {
    throw new ApiError('CONFLICT', `Purchase order ${po.poNumber} is ${po.status}: only a draft can be changed`, { field: 'status', reason: `is ${po.status}` });
  }
}

/**
 * Purchase orders (webhooks.md 3, 6.2): a draft is created and changed over REST (po.created, po.updated);
 * submitting, deciding and receiving are purchase-order-approval.ts and purchase-order-receipts.ts.
 */
export const purchaseOrders = new RecordService<PurchaseOrder, PurchaseOrderRecord, PurchaseOrderCreate, PurchaseOrderUpdate>({
  entity: PurchaseOrder,
  label: 'Purchase order',
  wire: {
    po_number: 'poNumber',
    vendor_id: { relation: 'vendor', target: Vendor, label: 'a vendor' },
    project_id: { relation: 'project', target: Project, label: 'a project' },
    status: read((po) => po.status),
    currency: {
      read: (view) => (view as unknown as PurchaseOrder).currency,
      write: (po, value, { field }) => {
        if (!CURRENCIES.has(value as string)) throw ApiError.invalid(field, 'is not an ISO 4217 currency code');
        po.currency = value as string;
      },
    },
    not_to_exceed_amount: 'notToExceedAmount',
    line_items: {
      read: (view) =>
        linesOf(view as unknown as PurchaseOrder).map((item) => ({
          id: item.id,
          description: item.description,
          quantity: item.quantity,
          unit_price: item.unitPrice,
          total: lineTotal(item),
          category: item.category,
          quantity_received: item.quantityReceived,
        })),
      write: writeLineItems,
    },
    subtotal: read((po) => amountsOf(po).subtotal),
    tax: 'tax',
    total_amount: read((po) => amountsOf(po).total),
    notes: 'notes',
    delivery_date: 'deliveryDate',
    payment_terms: 'paymentTerms',
    created_by: read((po) => po.createdBy),
    created_by_name: read((po) => po.createdByName),
    submitted_at: read((po) => iso(po.submittedAt)),
    approved_at: read((po) => iso(po.approvedAt)),
    rejected_at: read((po) => iso(po.rejectedAt)),
    rejection_reason: read((po) => po.rejectionReason),
    approval_workflow: read(approvalWorkflow),
    receipts: read((po) => po.receipts),
  },
  naturalKey: { scope: null, fields: ['poNumber'], describe: (po) => `A purchase order numbered "${po.poNumber}" already exists`, uniqueIndex: 'purchase_orders_company_number_unique' },
  wireRelations: ['lineItems'],
  populate: ['vendor', 'project'],
  namesActor: true,
  beforeUpdate: assertDraft,
  async check(_em, po) {
    const { total } = amountsOf(po);
    if (po.notToExceedAmount !== null && total > po.notToExceedAmount) {
      throw ApiError.invalid('not_to_exceed_amount', `is ${po.notToExceedAmount}, less than the total_amount ${total}`);
    }
  },
  async beforeInsert(em, po, ctx) {
    po.poNumber ??= await nextPoNumber(em, po.company.id);
    po.createdBy = ctx.actor.apiKeyId;
    po.createdByName = ctx.actorName!;
  },
  events: {
    created: (po) => ({ key: 'po.created', payload: { b: poBase(po) } }),
    updated: (po, change, ctx) => ({ key: 'po.updated', payload: { b: poUpdatedData(po, change, ctx) } }),
  },
});
