import type { EntityManager } from '@mikro-orm/postgresql';
import { lockNaturalKey } from '../src/domain/natural-keys';
import { Employee } from '../src/domain/people/employee.entity';
import type { PurchaseOrderApprovalInput, PurchaseOrderDecision } from '../workflows/purchase-order-approval.contract';
import { type ApprovalDecision, ApprovalThreshold, type PurchaseOrder, type PurchaseOrderStatus } from '../src/domain/supply/purchase-order.entity';
import { purchaseOrders } from '../src/domain/supply/purchase-orders';
import { ApiError } from '../src/errors';
import { recordEvent } from '../src/events/outbox';
import { poApprovedData, poRejectedData } from '../src/domain/supply/purchase-order-events';
import type { ActivityDeps } from './deps';

const sameRole = (a: string | null | undefined, b: string | null | undefined) => !!a && !!b && a.trim().toLowerCase() === b.trim().toLowerCase();

/** The required roles no one has decided for yet, in chain order. */
const openRoles = (po: PurchaseOrder) => [...new Set((po.requiredApprovers ?? []).map((a) => a.role))].filter((role) => !po.decisions.some((d) => d.role === role));

/** The open roles `employee` may decide for: as a required approver of them, or for all of them as the escalation role's holder. */
function rolesOf(po: PurchaseOrder, employee: Employee): string[] {
  const open = openRoles(po);
  if (po.escalatedAt && sameRole(employee.role?.getEntity().name, po.escalatedToRole)) return open;
  return open.filter((role) => (po.requiredApprovers ?? []).some((a) => a.role === role && a.id === employee.id));
}

async function loadPending(tx: EntityManager, input: PurchaseOrderApprovalInput): Promise<PurchaseOrder> {
  return purchaseOrders.loadForUpdate(tx, input.companyId, input.purchaseOrderId);
}

/**
 * The steps of a purchase order approval. Each is idempotent: a decision an approver has recorded already is
 * answered as it was, and an escalation is recorded once.
 */
export function createPurchaseOrderApprovalActivities({ orm, logger }: ActivityDeps) {
  return {
    /** Whether the purchase order waits for approval, once the transaction that submitted it has ended (submitPurchaseOrder holds this lock). */
    async purchaseOrderAwaitsApproval(input: PurchaseOrderApprovalInput): Promise<boolean> {
      return orm.em.fork().transactional(async (tx) => {
        await lockNaturalKey(tx, 'po-approval', input.purchaseOrderId);
        const [row] = await tx.execute<{ status: string }[]>('select status from purchase_orders where id = ? and company_id = ?', [input.purchaseOrderId, input.companyId]);
        return row?.status === 'pending_approval';
      });
    },

    /**
     * Records one approver's decision for each open role they may decide for. A rejection rejects the purchase
     * order (po.rejected); the approval that leaves no role open approves it (po.approved). Refusals are 409s
     * (400 for an unknown employee) that fail the update, not the workflow.
     */
    async recordPurchaseOrderDecision(input: PurchaseOrderApprovalInput, decision: PurchaseOrderDecision): Promise<PurchaseOrderStatus> {
      return orm.em.fork().transactional(async (tx) => {
        const po = await loadPending(tx, input);
        const employee = await tx.findOne(Employee, { id: decision.approverId, company: input.companyId }, { populate: ['role'] });
        if (!employee) throw ApiError.invalid('approver_id', 'does not match an employee of your company');
        const verdict = decision.approve ? 'approved' : 'rejected';
        if (po.decisions.some((d) => d.id === employee.id && d.decision === verdict)) return po.status;
        if (po.status !== 'pending_approval') {
          throw new ApiError('CONFLICT', `Purchase order ${po.poNumber} is ${po.status} already`, { field: 'status', reason: `is ${po.status}` });
        }
        const roles = rolesOf(po, employee);
        if (!roles.length) {
          throw new ApiError('CONFLICT', `${employee.name} may not decide on purchase order ${po.poNumber}: no role whose approval it still needs is theirs`, {
            field: 'approver_id',
            reason: 'is not an approver of a role still open',
          });
        }
        const at = new Date();
        const made: ApprovalDecision[] = roles.map((role) => ({ id: employee.id, name: employee.name, role, decision: verdict, decided_at: at.toISOString(), notes: decision.notes }));
        po.decisions = [...po.decisions, ...made];
        if (!decision.approve) {
          po.status = 'rejected';
          po.rejectedAt = at;
          po.rejectionReason = decision.notes;
        } else if (openRoles(po).length === 0) {
          po.status = 'approved';
          po.approvedAt = at;
        }
        await tx.flush();
        if (po.status === 'rejected') recordEvent(tx, decision.actor, 'po.rejected', { b: poRejectedData(po, employee) });
        if (po.status === 'approved') recordEvent(tx, decision.actor, 'po.approved', { b: poApprovedData(po, employee, decision.notes) });
        return po.status;
      });
    },

    /**
     * At the deadline, with approvals missing: the company's top approval role (the highest limit, no limit
     * first) may give every missing approval from now on. Logged as an alert, once.
     */
    async escalatePurchaseOrderApproval(input: PurchaseOrderApprovalInput): Promise<void> {
      await orm.em.fork().transactional(async (tx) => {
        const po = await loadPending(tx, input);
        if (po.status !== 'pending_approval' || po.escalatedAt) return;
        const thresholds = await tx.find(ApprovalThreshold, { company: input.companyId });
        const top = thresholds.sort((a, b) => (b.maxAmount ?? Infinity) - (a.maxAmount ?? Infinity))[0];
        Object.assign(po, { escalatedAt: new Date(), escalatedToRole: top?.roleName ?? null });
        logger.warn(
          { alert: 'purchase_order_approval_escalated', companyId: input.companyId, purchaseOrderId: po.id, poNumber: po.poNumber, escalatedToRole: po.escalatedToRole, missing: openRoles(po) },
          `Purchase order ${po.poNumber} passed its approval deadline; escalated to ${po.escalatedToRole ?? 'no role (the company has no thresholds)'}`,
        );
      });
    },
  };
}

export type PurchaseOrderApprovalActivities = ReturnType<typeof createPurchaseOrderApprovalActivities>;
