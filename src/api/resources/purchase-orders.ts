import { actorOf } from '../../domain/accounts/actor';
import { PURCHASE_ORDERS_APPROVE_SCOPE, readScope, writeScope } from '../../domain/accounts/scopes';
import { assertEmployee } from '../../domain/people/employees';
import { addAttachment, ATTACHMENT_TYPES, listAttachments, readAttachment, removeAttachment } from '../../domain/supply/attachments';
import { decidePurchaseOrder, submitPurchaseOrder } from '../../domain/supply/purchase-order-approval';
import { PURCHASE_ORDER_STATUSES } from '../../domain/supply/purchase-order.entity';
import { receivePurchaseOrder } from '../../domain/supply/purchase-order-receipts';
import { purchaseOrders } from '../../domain/supply/purchase-orders';
import { ApiError } from '../../errors';
import type { PurchaseOrderApprove, PurchaseOrderReceive, PurchaseOrderReject } from '../../generated/schemas';
import type { ApprovalRuntime } from '../../domain/workflow-gateway';
import type { AppDeps } from '../context';
import type { QueryParam, RouteSpec } from '../routes/route-spec';
import { byId, byText, byValue } from './filters';
import { defineResource } from './resource';

const SCHEMA = 'rest/purchase-orders.json#/$defs';
const RECORD = `${SCHEMA}/record`;
const FILE_TYPES = Object.keys(ATTACHMENT_TYPES);

/** A short text query parameter; `plain` refuses path separators and control characters (a file name). */
function textParam(name: string, description: string, maxLength: number, options: { plain?: boolean; required?: boolean } = {}): QueryParam {
  return {
    name,
    description,
    required: options.required,
    schema: { type: 'string', minLength: 1, maxLength, ...(options.plain ? { pattern: '^[^/\\\\\\u0000-\\u001f\\u007f]+$' } : {}) },
    parse(raw) {
      const value = raw.trim();
      if (value.length < 1 || value.length > maxLength) throw ApiError.invalid(name, `must be 1 to ${maxLength} characters`);
      // eslint-disable-next-line no-control-regex -- control characters are what a file name may not hold
      if (options.plain && /[/\\\u0000-\u001f\u007f]/.test(value)) throw ApiError.invalid(name, 'must not contain / or \\ or control characters');
      return value;
    },
  };
}

/** `filename*` (RFC 6266) keeps any name; the plain `filename` is its ASCII fallback. */
const contentDisposition = (filename: string) => `attachment; filename="${filename.replace(/[^\x20-\x7e]|["\\]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(filename)}`;

function lifecycleRoutes(deps: AppDeps): RouteSpec[] {
  const runtime: ApprovalRuntime = {
    workflows: deps.workflows,
    deadlineMs: deps.config.purchaseOrderApprovalDeadlineMs,
    waitMs: deps.config.inboundWaitMs,
  };
  const common = { tag: 'purchase-orders', record: 'Purchase order' };
  const decision = (approve: boolean): RouteSpec => ({
    ...common,
    method: 'POST',
    path: `/purchase-orders/{id}/${approve ? 'approve' : 'reject'}`,
    scope: PURCHASE_ORDERS_APPROVE_SCOPE,
    summary: approve ? 'Approve a purchase order, as one of its approvers' : 'Reject a purchase order, as one of its approvers',
    description: approve
      ? 'Records approver_id\'s approval for each role still open that they hold (an update of the purchaseOrderApproval workflow). The approval that leaves no role open approves the purchase order (po.approved). An employee who holds no open role is a 409; the same approval again answers as the first.'
      : 'Records approver_id\'s rejection: the purchase order is rejected (po.rejected) and its approval ends.',
    body: { schema: `${SCHEMA}/${approve ? 'approve' : 'reject'}` },
    responses: { 200: { description: 'The purchase order after the decision', schema: RECORD } },
    async handler(ctx) {
      const actor = actorOf(ctx.state.principal);
      const body = ctx.request.body as PurchaseOrderApprove & PurchaseOrderReject;
      await assertEmployee(ctx.state.em, actor.companyId, body.approver_id, 'approver_id');
      const notes = (approve ? body.notes : body.reason) ?? null;
      ctx.body = await decidePurchaseOrder(ctx.state.em, runtime, ctx.params.id!, { approve, approverId: body.approver_id, notes, actor });
    },
  });
  return [
    {
      ...common,
      method: 'POST',
      path: '/purchase-orders/{id}/submit',
      scope: writeScope('purchase-orders'),
      summary: 'Submit a draft purchase order for approval',
      description:
        'Computes the required approvers from the approval thresholds (every role whose limit is below the total, up to the first that covers it) and the deadline ' +
        '(PO_APPROVAL_DEADLINE), records po.submitted and starts the purchaseOrderApproval workflow. 409 when it is not a draft, has no line items, or no role may approve its total.',
      body: { schema: `${SCHEMA}/submit`, optional: true },
      responses: { 200: { description: 'The purchase order, pending_approval', schema: RECORD } },
      async handler(ctx) {
        ctx.body = await submitPurchaseOrder(ctx.state.em, runtime, actorOf(ctx.state.principal), ctx.params.id!);
      },
    },
    decision(true),
    decision(false),
    {
      ...common,
      method: 'POST',
      path: '/purchase-orders/{id}/receive',
      scope: writeScope('purchase-orders'),
      summary: 'Record goods received',
      description:
        'For an approved or partially_received purchase order: each received item adds to its line item (at most what is still to receive). The purchase order is then partially_received, or received once every line is. Emits po.received.',
      body: { schema: `${SCHEMA}/receive` },
      responses: { 200: { description: 'The purchase order after the receipt', schema: RECORD } },
      async handler(ctx) {
        ctx.body = await receivePurchaseOrder(ctx.state.em, actorOf(ctx.state.principal), ctx.params.id!, ctx.request.body as PurchaseOrderReceive);
      },
    },
  ];
}

function attachmentRoutes({ config }: AppDeps): RouteSpec[] {
  const common = { tag: 'purchase-orders', record: 'Purchase order' };
  const one = { ...common, path: '/purchase-orders/{id}/attachments/{attachment_id}', pathRecords: { attachment_id: 'Attachment' } };
  const attachment = `${SCHEMA}/attachment`;
  return [
    {
      ...common,
      method: 'POST',
      path: '/purchase-orders/{id}/attachments',
      scope: writeScope('purchase-orders'),
      summary: 'Attach a file',
      description:
        `The file is the request body, its media type the Content-Type: one of ${FILE_TYPES.join(', ')}, at most ATTACHMENT_MAX_BYTES ` +
        `(${config.attachmentMaxBytes} bytes; 413 beyond, 415 for another type, 400 when the bytes are not of that type). Emits po.attachment.added with its download_url.`,
      query: [
        textParam('filename', 'The file name shown to people and used on download.', 255, { plain: true, required: true }),
        textParam('category', 'e.g. quote, invoice, delivery_note.', 100),
        textParam('notes', 'About the file.', 1000),
      ],
      file: { types: FILE_TYPES, maxBytes: config.attachmentMaxBytes },
      responses: { 201: { description: 'The attachment; Location is its download URL', schema: attachment } },
      async handler(ctx) {
        const { filename, category = null, notes = null } = ctx.state.query as { filename: string; category?: string; notes?: string };
        const upload = { bytes: ctx.state.rawBody, fileType: ctx.state.fileType!, filename, category, notes };
        const record = await addAttachment(ctx.state.em, actorOf(ctx.state.principal), ctx.params.id!, upload, config.publicBaseUrl);
        ctx.status = 201;
        ctx.set('Location', `${ctx.path}/${record.id}`);
        ctx.body = record;
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/purchase-orders/{id}/attachments',
      scope: readScope('purchase-orders'),
      summary: 'List the attachments of a purchase order',
      description: 'Oldest first; at most 100.',
      responses: { 200: { description: 'Its attachments', dataOf: attachment } },
      async handler(ctx) {
        ctx.body = { data: await listAttachments(ctx.state.em, ctx.state.principal.companyId, ctx.params.id!, config.publicBaseUrl) };
      },
    },
    {
      ...one,
      method: 'GET',
      scope: readScope('purchase-orders'),
      summary: 'Download an attachment',
      description: 'The bytes as uploaded, with their media type, as a download (Content-Disposition: attachment). The download_url of po.attachment.added.',
      responses: { 200: { description: 'The file', fileTypes: FILE_TYPES } },
      async handler(ctx) {
        const { attachment, bytes } = await readAttachment(ctx.state.em, ctx.state.principal.companyId, ctx.params.id!, ctx.params.attachment_id!);
        ctx.set('Content-Disposition', contentDisposition(attachment.filename));
        ctx.type = attachment.fileType;
        ctx.body = bytes;
      },
    },
    {
      ...one,
      method: 'DELETE',
      scope: writeScope('purchase-orders'),
      summary: 'Remove an attachment',
      description: 'Removes the file and its bytes; emits po.attachment.removed with the reason given.',
      query: [textParam('reason', 'Why it is removed (removal_reason of the event).', 1000)],
      responses: { 204: { description: 'Removed' } },
      async handler(ctx) {
        const { reason = null } = ctx.state.query as { reason?: string };
        await removeAttachment(ctx.state.em, actorOf(ctx.state.principal), ctx.params.id!, ctx.params.attachment_id!, reason);
        ctx.status = 204;
      },
    },
  ];
}

export const purchaseOrdersResource = defineResource({
  collection: 'purchase-orders',
  label: 'Purchase order',
  plural: 'purchase orders',
  description:
    'Purchase orders to a vendor for a project, with line items (webhooks.md 3, 6.2). draft → submit → pending_approval → approvers approve or reject → approved | rejected; ' +
    'an approved one is received (partially_received, then received). Only drafts change; the spec lists no DELETE.',
  schema: 'rest/purchase-orders.json',
  service: { list: purchaseOrders.list.bind(purchaseOrders), get: purchaseOrders.get.bind(purchaseOrders), create: purchaseOrders.create.bind(purchaseOrders), update: purchaseOrders.update.bind(purchaseOrders) },
  filters: [
    byValue('status', 'status', PURCHASE_ORDER_STATUSES, 'Purchase orders in this status.'),
    byId('vendor_id', 'vendor', 'Purchase orders to this vendor.'),
    byId('project_id', 'project', 'Purchase orders of this project.'),
    byText('po_number', 'poNumber', 'The purchase order with this number (ignoring case).'),
  ],
  extraRoutes: (deps) => [...lifecycleRoutes(deps), ...attachmentRoutes(deps)],
});
