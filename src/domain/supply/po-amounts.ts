import type { PurchaseOrder, PurchaseOrderLineItem } from './purchase-order.entity';

/** Amounts are kept to the cent: every total is rounded half away from zero, as invoices are. */
export const cents = (amount: number): number => Math.sign(amount) * Math.round(Math.abs(amount) * 100 + Number.EPSILON) / 100;

export const lineTotal = (item: PurchaseOrderLineItem): number => cents(item.quantity * item.unitPrice);

/** The line items in the order the sender gave. */
export const linesOf = (po: PurchaseOrder): PurchaseOrderLineItem[] => [...po.lineItems.getItems()].sort((a, b) => a.position - b.position);

export function amountsOf(po: PurchaseOrder): { subtotal: number; total: number } {
  const subtotal = cents(po.lineItems.getItems().reduce((sum, item) => sum + lineTotal(item), 0));
  return { subtotal, total: cents(subtotal + po.tax) };
}
