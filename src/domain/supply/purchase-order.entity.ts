import { Collection, Entity, Index, ManyToOne, OneToMany, OneToOne, type Opt, Property, type Ref, Unique } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../errors';
import { CompanyRecord } from '../company-record';
import { Project } from '../work/project.entity';
import { Vendor } from './vendor.entity';

export const PURCHASE_ORDER_STATUSES = ['draft', 'pending_approval', 'approved', 'rejected', 'partially_received', 'received'] as const;
export type PurchaseOrderStatus = (typeof PURCHASE_ORDER_STATUSES)[number];

export const RECEIVED_CONDITIONS = ['good', 'damaged', 'defective'] as const;

/** Someone who may approve for a role, with the role's limit (null: none), as submission found them. */
export interface RequiredApprover {
  id: string;
  name: string;
  role: string;
  approval_threshold: number | null;
}

/** One decision, for one required role. */
export interface ApprovalDecision {
  id: string;
  name: string;
  role: string;
  decision: 'approved' | 'rejected';
  decided_at: string;
  notes: string | null;
}

export interface Receipt {
  received_at: string;
  received_by: string;
  receipt_location: string | null;
  receipt_notes: string | null;
  received_items: { line_item_id: string; quantity_received: number; condition: (typeof RECEIVED_CONDITIONS)[number]; notes: string | null }[];
}

/**
 * A purchase order to a vendor for a project. Its approval (required approvers, deadline, decisions) is set by
 * submission and the purchaseOrderApproval workflow; receipts accumulate on its line items.
 */
@Entity({ tableName: 'purchase_orders' })
@Index({ name: 'purchase_orders_company_created_idx', properties: ['company', 'createdAt', 'id'] })
@Index({ name: 'purchase_orders_vendor_idx', properties: ['vendor'] })
@Index({ name: 'purchase_orders_project_idx', properties: ['project'] })
@Unique({
  name: 'purchase_orders_company_number_unique',
  expression: 'create unique index "purchase_orders_company_number_unique" on "purchase_orders" ("company_id", lower("po_number"))',
})
export class PurchaseOrder extends CompanyRecord {
  @Property({ type: 'text' })
  poNumber!: string;

  /** Purchase orders are financial records: a vendor or project with any cannot be deleted. */
  @ManyToOne(() => Vendor, { ref: true, deleteRule: 'restrict' })
  vendor!: Ref<Vendor>;

  @ManyToOne(() => Project, { ref: true, deleteRule: 'restrict' })
  project!: Ref<Project>;

  @Property({ type: 'text' })
  status: Opt<PurchaseOrderStatus> = 'draft';

  @Property({ type: 'text' })
  currency: Opt<string> = 'USD';

  @Property({ type: 'double', nullable: true })
  notToExceedAmount: number | null = null;

  @Property({ type: 'double' })
  tax: Opt<number> = 0;

  @Property({ type: 'text', nullable: true })
  notes: string | null = null;

  @Property({ type: 'date', nullable: true })
  deliveryDate: string | null = null;

  @Property({ type: 'text', nullable: true })
  paymentTerms: string | null = null;

  /** The name of the API key that created it (created_by_name of the events). */
  @Property({ type: 'text' })
  createdByName!: string;

  /** The API key that created it. */
  @Property({ type: 'uuid' })
  createdBy!: string;

  @OneToMany(() => PurchaseOrderLineItem, (item) => item.purchaseOrder, { orphanRemoval: true, orderBy: { position: 'asc' } })
  lineItems = new Collection<PurchaseOrderLineItem>(this);

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  submittedAt: Date | null = null;

  @Property({ type: 'text', nullable: true })
  workflowId: string | null = null;

  @Property({ type: 'json', nullable: true })
  requiredApprovers: RequiredApprover[] | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  approvalDeadline: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  escalatedAt: Date | null = null;

  @Property({ type: 'text', nullable: true })
  escalatedToRole: string | null = null;

  @Property({ type: 'json' })
  decisions: Opt<ApprovalDecision[]> = [];

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  approvedAt: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  rejectedAt: Date | null = null;

  @Property({ type: 'text', nullable: true })
  rejectionReason: string | null = null;

  @Property({ type: 'json' })
  receipts: Opt<Receipt[]> = [];
}

/** 409 when purchase orders name the vendor or project about to be deleted: they are kept whole. */
export async function refuseWithPurchaseOrders(em: EntityManager, where: { vendor: Vendor } | { project: Project }, what: string): Promise<void> {
  const count = await em.count(PurchaseOrder, where);
  if (count > 0) throw new ApiError('CONFLICT', `${what} has ${count} purchase order(s), which are kept; it cannot be deleted`, { field: null, reason: `has ${count} purchase order(s)` });
}

/** One line of a purchase order; `quantityReceived` adds up its receipts. */
@Entity({ tableName: 'purchase_order_line_items' })
@Index({ name: 'purchase_order_line_items_purchase_order_idx', properties: ['purchaseOrder'] })
export class PurchaseOrderLineItem extends CompanyRecord {
  @ManyToOne(() => PurchaseOrder, { ref: true, deleteRule: 'cascade' })
  purchaseOrder!: Ref<PurchaseOrder>;

  /** Keeps the order the sender gave. */
  @Property({ type: 'integer' })
  position!: number;

  @Property({ type: 'text' })
  description!: string;

  @Property({ type: 'double' })
  quantity!: number;

  @Property({ type: 'double' })
  unitPrice!: number;

  @Property({ type: 'text', nullable: true })
  category: string | null = null;

  @Property({ type: 'double' })
  quantityReceived: Opt<number> = 0;
}

/** A file attached to a purchase order; its bytes are kept by the attachment store (attachments.ts). */
@Entity({ tableName: 'purchase_order_attachments' })
@Index({ name: 'purchase_order_attachments_purchase_order_idx', properties: ['purchaseOrder', 'createdAt', 'id'] })
export class PurchaseOrderAttachment extends CompanyRecord {
  @ManyToOne(() => PurchaseOrder, { ref: true, deleteRule: 'cascade' })
  purchaseOrder!: Ref<PurchaseOrder>;

  @Property({ type: 'text' })
  filename!: string;

  @Property({ type: 'text' })
  fileType!: string;

  @Property({ type: 'integer' })
  fileSize!: number;

  @Property({ type: 'text', nullable: true })
  category: string | null = null;

  @Property({ type: 'text', nullable: true })
  notes: string | null = null;

  @Property({ type: 'uuid' })
  uploadedBy!: string;

  @Property({ type: 'text' })
  uploadedByName!: string;
}

/** The bytes of an attachment, in a table of their own so listing attachments never reads them. */
@Entity({ tableName: 'purchase_order_attachment_contents' })
export class AttachmentContent {
  @OneToOne(() => PurchaseOrderAttachment, { primary: true, ref: true, deleteRule: 'cascade' })
  attachment!: Ref<PurchaseOrderAttachment>;

  @Property({ type: 'blob' })
  bytes!: Buffer;
}

/** How much each role may approve (webhooks.md 6.2 approval_threshold); submission builds the escalation chain from them. */
@Entity({ tableName: 'approval_thresholds' })
@Index({ name: 'approval_thresholds_company_created_idx', properties: ['company', 'createdAt', 'id'] })
@Unique({
  name: 'approval_thresholds_company_role_unique',
  expression: 'create unique index "approval_thresholds_company_role_unique" on "approval_thresholds" ("company_id", lower("role_name"))',
})
export class ApprovalThreshold extends CompanyRecord {
  @Property({ type: 'text' })
  roleName!: string;

  /** null: no limit. */
  @Property({ type: 'double', nullable: true })
  maxAmount: number | null = null;
}
