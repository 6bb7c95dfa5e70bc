import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../errors';
import { recordEvent } from '../../events/outbox';
import { poReceivedData } from './purchase-order-events';
import type { PurchaseOrderReceive, PurchaseOrder as PurchaseOrderRecord } from '../../generated/schemas';
import type { Actor } from '../accounts/actor';
import { lifecycleActor } from '../time/timesheet-lifecycle';
import type { Receipt } from './purchase-order.entity';
import { purchaseOrders } from './purchase-orders';

/** Quantities are decimals: sums of them may miss the quantity ordered by a rounding error. */
const SLACK = 1e-9;

/**
 * Records a receipt of an approved purchase order (po.received): each item adds to its line's quantity
 * received, up to the quantity ordered; the purchase order is partially_received until every line is
 * received in full, then received. Damaged and defective goods count as received (their condition is kept).
 */
export async function receivePurchaseOrder(em: EntityManager, actor: Actor, id: string, body: PurchaseOrderReceive): Promise<PurchaseOrderRecord> {
  return em.transactional(async (tx) => {
    const po = await purchaseOrders.loadForUpdate(tx, actor.companyId, id);
    if (po.status !== 'approved' && po.status !== 'partially_received') {
      throw new ApiError('CONFLICT', `Purchase order ${po.poNumber} is ${po.status}: only an approved one can be received`, { field: 'status', reason: `is ${po.status}` });
    }
    const lines = new Map(po.lineItems.getItems().map((item) => [item.id, item]));
    const seen = new Set<string>();
    for (const [i, item] of body.received_items.entries()) {
      const field = `received_items[${i}]`;
      const line = lines.get(item.line_item_id.toLowerCase());
      if (!line) throw ApiError.invalid(`${field}.line_item_id`, 'does not match a line item of this purchase order');
      if (seen.has(line.id)) throw ApiError.invalid(`${field}.line_item_id`, 'names a line item given before in this receipt');
      seen.add(line.id);
      const left = line.quantity - line.quantityReceived;
      if (item.quantity_received > left + SLACK) throw ApiError.invalid(`${field}.quantity_received`, `is more than the ${left} still to receive of this line item`);
      line.quantityReceived = Math.min(line.quantity, line.quantityReceived + item.quantity_received);
    }
    const who = await lifecycleActor(tx, actor);
    const receipt: Receipt = {
      received_at: who.at.toISOString(),
      received_by: who.by,
      receipt_location: body.receipt_location ?? null,
      receipt_notes: body.receipt_notes ?? null,
      received_items: body.received_items.map((item) => ({
        line_item_id: item.line_item_id.toLowerCase(),
        quantity_received: item.quantity_received,
        condition: item.condition ?? 'good',
        notes: item.notes ?? null,
      })),
    };
    po.receipts = [...po.receipts, receipt];
    po.status = [...lines.values()].every((line) => line.quantityReceived >= line.quantity - SLACK) ? 'received' : 'partially_received';
    await tx.flush();
    recordEvent(tx, actor, 'po.received', { b: poReceivedData(po, receipt, who) });
    return purchaseOrders.get(tx, actor.companyId, id);
  });
}
