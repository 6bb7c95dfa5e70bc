import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../errors';
import { recordEvent } from '../../events/outbox';
import { poAttachmentAddedData, poAttachmentRemovedData } from './purchase-order-events';
import type { PurchaseOrderAttachment as AttachmentRecord } from '../../generated/schemas';
import type { Actor } from '../accounts/actor';
import { lifecycleActor } from '../time/timesheet-lifecycle';
import { AttachmentContent, PurchaseOrderAttachment } from './purchase-order.entity';
import { purchaseOrders } from './purchase-orders';

/** Where the bytes of attachments are kept, in the caller's transaction. */
export interface AttachmentStore {
  put(em: EntityManager, attachment: PurchaseOrderAttachment, bytes: Buffer): void;
  read(em: EntityManager, attachment: PurchaseOrderAttachment): Promise<Buffer>;
  remove(em: EntityManager, attachment: PurchaseOrderAttachment): Promise<void>;
}

/**
 * PostgreSQL (bytea, a table of their own): a file is written and removed in the same transaction as its record
 * and event, so neither exists without the other, and backups hold both. A disk or object store would
 * implement AttachmentStore.
 */
const postgresStore: AttachmentStore = {
  put: (em, attachment, bytes) => void em.create(AttachmentContent, { attachment, bytes }),
  read: async (em, attachment) => (await em.findOneOrFail(AttachmentContent, { attachment })).bytes,
  remove: async (em, attachment) => void (await em.nativeDelete(AttachmentContent, { attachment })),
};

const store: AttachmentStore = postgresStore;

const startsWith = (bytes: Buffer, prefix: string | number[], at = 0) => bytes.subarray(at, at + prefix.length).equals(Buffer.from(prefix as string, 'latin1'));
const utf8 = new TextDecoder('utf-8', { fatal: true });
const isText = (bytes: Buffer) => {
  try {
    return !utf8.decode(bytes).includes('\u0000');
  } catch {
    return false;
  }
};
const isZip = (bytes: Buffer) => startsWith(bytes, 'PK\u0003\u0004');

/**
 * The media types an attachment may have, each with a check of the bytes: a file is taken only when it is what
 * it says (a PDF starts with %PDF-, an XLSX is a ZIP archive, text is UTF-8), so a download never serves
 * something else under an innocent type.
 */
export const ATTACHMENT_TYPES: Readonly<Record<string, (bytes: Buffer) => boolean>> = {
  'application/pdf': (bytes) => startsWith(bytes, '%PDF-'),
  'image/png': (bytes) => startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  'image/jpeg': (bytes) => startsWith(bytes, [0xff, 0xd8, 0xff]),
  'image/webp': (bytes) => startsWith(bytes, 'RIFF') && startsWith(bytes, 'WEBP', 8),
  'text/plain': isText,
  'text/csv': isText,
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': isZip,
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': isZip,
};

/** A purchase order keeps at most this many attachments. */
export const MAX_ATTACHMENTS = 100;

export interface Upload {
  bytes: Buffer;
  fileType: string;
  filename: string;
  category: string | null;
  notes: string | null;
}

export const downloadUrl = (baseUrl: string, attachment: PurchaseOrderAttachment) =>
  `${baseUrl}/api/v1/purchase-orders/${attachment.purchaseOrder.id}/attachments/${attachment.id}`;

const toRecord = (attachment: PurchaseOrderAttachment, baseUrl: string): AttachmentRecord => ({
  id: attachment.id,
  purchase_order_id: attachment.purchaseOrder.id,
  filename: attachment.filename,
  file_size: attachment.fileSize,
  file_type: attachment.fileType,
  category: attachment.category,
  notes: attachment.notes,
  uploaded_by: attachment.uploadedBy,
  uploaded_by_name: attachment.uploadedByName,
  uploaded_at: attachment.createdAt.toISOString(),
  download_url: downloadUrl(baseUrl, attachment),
});

/** Attaches a file to a purchase order in any status (po.attachment.added, with its download URL). */
export async function addAttachment(em: EntityManager, actor: Actor, purchaseOrderId: string, upload: Upload, baseUrl: string): Promise<AttachmentRecord> {
  if (!ATTACHMENT_TYPES[upload.fileType]!(upload.bytes)) throw ApiError.invalid('body', `is not a ${upload.fileType} file (its content does not match its Content-Type)`);
  return em.transactional(async (tx) => {
    const po = await purchaseOrders.loadForUpdate(tx, actor.companyId, purchaseOrderId);
    if ((await tx.count(PurchaseOrderAttachment, { purchaseOrder: po })) >= MAX_ATTACHMENTS) {
      throw new ApiError('CONFLICT', `Purchase order ${po.poNumber} has ${MAX_ATTACHMENTS} attachments, the most it keeps; remove one first`, { field: null, reason: 'too many attachments' });
    }
    const who = await lifecycleActor(tx, actor);
    const attachment = tx.create(PurchaseOrderAttachment, {
      company: po.company,
      purchaseOrder: po,
      filename: upload.filename,
      fileType: upload.fileType,
      fileSize: upload.bytes.length,
      category: upload.category,
      notes: upload.notes,
      uploadedBy: who.by,
      uploadedByName: who.byName,
      createdAt: who.at,
      updatedAt: who.at,
    });
    store.put(tx, attachment, upload.bytes);
    await tx.flush();
    recordEvent(tx, actor, 'po.attachment.added', { b: poAttachmentAddedData(po, attachment, downloadUrl(baseUrl, attachment)) });
    return toRecord(attachment, baseUrl);
  });
}

async function findAttachment(em: EntityManager, companyId: string, purchaseOrderId: string, attachmentId: string): Promise<PurchaseOrderAttachment> {
  await purchaseOrders.get(em, companyId, purchaseOrderId);
  const attachment = await em.findOne(PurchaseOrderAttachment, { id: attachmentId, purchaseOrder: purchaseOrderId, company: companyId });
  if (!attachment) throw ApiError.notFound('Attachment', 'attachment_id');
  return attachment;
}

/** The purchase order's attachments, oldest first (404 for an unknown purchase order). */
export async function listAttachments(em: EntityManager, companyId: string, purchaseOrderId: string, baseUrl: string): Promise<AttachmentRecord[]> {
  await purchaseOrders.get(em, companyId, purchaseOrderId);
  const attachments = await em.find(PurchaseOrderAttachment, { purchaseOrder: purchaseOrderId, company: companyId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  return attachments.map((a) => toRecord(a, baseUrl));
}

/** An attachment and its bytes, exactly as uploaded. */
export async function readAttachment(em: EntityManager, companyId: string, purchaseOrderId: string, attachmentId: string) {
  const attachment = await findAttachment(em, companyId, purchaseOrderId, attachmentId);
  return { attachment, bytes: await store.read(em, attachment) };
}

/** Removes an attachment and its bytes (po.attachment.removed, with the reason given). */
export async function removeAttachment(em: EntityManager, actor: Actor, purchaseOrderId: string, attachmentId: string, reason: string | null): Promise<void> {
  await em.transactional(async (tx) => {
    const po = await purchaseOrders.loadForUpdate(tx, actor.companyId, purchaseOrderId);
    const attachment = await findAttachment(tx, actor.companyId, purchaseOrderId, attachmentId);
    const who = await lifecycleActor(tx, actor);
    recordEvent(tx, actor, 'po.attachment.removed', { b: poAttachmentRemovedData(po, attachment, who, reason) });
    await store.remove(tx, attachment);
    tx.remove(attachment);
    await tx.flush();
  });
}
