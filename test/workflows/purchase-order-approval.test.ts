import { type WorkflowHandle, WorkflowUpdateFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { PurchaseOrderApprovalActivities } from '../../activities/purchase-order-approval';
import { SETTINGS } from '../../src/config';
import type { PurchaseOrderStatus } from '../../src/domain/supply/purchase-order.entity';
import { ApiError } from '../../src/errors';
import { apiErrorFromWorkflow, withActivityFailures } from '../../src/temporal/failures';
import { APPROVAL_STATUS } from '../../workflows/search-attributes';
import type { purchaseOrderApproval } from '../../workflows/purchase-order-approval';
import { temporalUpdate } from '../../workflows/messages';
import { PURCHASE_ORDER_APPROVAL, type PurchaseOrderApprovalInput, type PurchaseOrderDecision } from '../../workflows/purchase-order-approval.contract';
import { createTimeSkippingEnv, recordingCalls, withWorker } from '../helpers/time-skipping';

const decidePurchaseOrderUpdate = temporalUpdate(PURCHASE_ORDER_APPROVAL.updates.decide);

// workflows/purchase-order-approval.ts in skipped time, its activities mocked (wrapped as the worker wraps them),
// with the service's default approval deadline.
const HOUR = 3_600_000;
const DEADLINE_MS = SETTINGS.PO_APPROVAL_DEADLINE.parse(SETTINGS.PO_APPROVAL_DEADLINE.default);
const FINANCE = '40000000-0000-4000-8000-000000000001';
const DIRECTOR = '40000000-0000-4000-8000-000000000002';
const STRANGER = '40000000-0000-4000-8000-000000000003';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createTimeSkippingEnv();
});
afterAll(() => env?.teardown());

let orderNumber = 0;
function newOrder(): PurchaseOrderApprovalInput {
  const n = String(++orderNumber).padStart(12, '0');
  return { companyId: '10000000-0000-4000-8000-000000000001', purchaseOrderId: `30000000-0000-4000-8000-${n}`, deadlineMs: DEADLINE_MS };
}

const decision = (approverId: string, approve = true): PurchaseOrderDecision => ({
  approve,
  approverId,
  notes: approve ? null : 'Over budget',
  actor: { companyId: '10000000-0000-4000-8000-000000000001', apiKeyId: '20000000-0000-4000-8000-000000000001' },
});

/** A purchase order needing the approval of FINANCE and DIRECTOR (`submitted`: recorded as submitted); others are refused as the activity refuses them. */
function approvalActivities({ submitted = true } = {}) {
  const missing = new Set([FINANCE, DIRECTOR]);
  let status: PurchaseOrderStatus = 'pending_approval';
  return recordingCalls(
    env,
    withActivityFailures<PurchaseOrderApprovalActivities>({
      purchaseOrderAwaitsApproval: async () => submitted,
      async recordPurchaseOrderDecision(_input, { approve, approverId }) {
        if (!missing.has(approverId)) {
          throw new ApiError('CONFLICT', 'Sam Stranger may not decide on purchase order PO-1: no role whose approval it still needs is theirs', {
            field: 'approver_id',
            reason: 'is not an approver of a role still open',
          });
        }
        missing.delete(approverId);
        status = !approve ? 'rejected' : missing.size === 0 ? 'approved' : 'pending_approval';
        return status;
      },
      escalatePurchaseOrderApproval: async () => undefined,
    }),
  );
}

const start = (taskQueue: string, input: PurchaseOrderApprovalInput) =>
  env.client.workflow.start<typeof purchaseOrderApproval>('purchaseOrderApproval', { taskQueue, workflowId: `po-approval/${input.purchaseOrderId}`, args: [input] });
const decide = (handle: WorkflowHandle, taken: PurchaseOrderDecision) => handle.executeUpdate(decidePurchaseOrderUpdate, { args: [taken] });
const approvalStatus = async (handle: WorkflowHandle) => (await handle.describe()).typedSearchAttributes.get(APPROVAL_STATUS);

describe('purchaseOrderApproval in skipped time', () => {
  test('the default deadline is 72 h', () => {
    expect(DEADLINE_MS).toBe(72 * HOUR);
  });

  test('each decision answers with the status after it; the last approval approves, without an escalation', async () => {
    const { activities, calls } = approvalActivities();
    const input = newOrder();
    await withWorker(env, activities, async (taskQueue) => {
      const handle = await start(taskQueue, input);
      expect(await decide(handle, decision(FINANCE))).toBe('pending_approval');
      expect(await decide(handle, decision(DIRECTOR))).toBe('approved');
      expect(await handle.result()).toEqual({ outcome: 'approved' });
      expect(await approvalStatus(handle)).toBe('approved');
    });
    expect(calls.map(({ name, args }) => ({ name, args }))).toEqual([
      { name: 'purchaseOrderAwaitsApproval', args: [input] },
      { name: 'recordPurchaseOrderDecision', args: [input, decision(FINANCE)] },
      { name: 'recordPurchaseOrderDecision', args: [input, decision(DIRECTOR)] },
    ]);
  });

  test('a rejection ends the approval', async () => {
    const { activities } = approvalActivities();
    await withWorker(env, activities, async (taskQueue) => {
      const handle = await start(taskQueue, newOrder());
      expect(await decide(handle, decision(FINANCE, false))).toBe('rejected');
      expect(await handle.result()).toEqual({ outcome: 'rejected' });
      expect(await approvalStatus(handle)).toBe('rejected');
    });
  });

  test('at the deadline (72 h) with approvals missing it escalates once, shown as escalated, and keeps waiting for them', async () => {
    const { activities, calls } = approvalActivities();
    await withWorker(env, activities, async (taskQueue) => {
      const startedAt = await env.currentTimeMs();
      const handle = await start(taskQueue, newOrder());
      expect(await decide(handle, decision(FINANCE))).toBe('pending_approval');
      await env.sleep(3 * DEADLINE_MS);
      expect(await approvalStatus(handle)).toBe('escalated');
      const escalations = calls.filter((call) => call.name === 'escalatePurchaseOrderApproval');
      expect(escalations).toHaveLength(1);
      expect(escalations[0]!.atMs - startedAt).toBeGreaterThanOrEqual(DEADLINE_MS);
      expect(escalations[0]!.atMs - startedAt).toBeLessThan(DEADLINE_MS + HOUR);

      expect(await decide(handle, decision(DIRECTOR))).toBe('approved');
      expect(await handle.result()).toEqual({ outcome: 'approved' });
    });
  });

  test('a refused decision fails its update with the 409 and the approval goes on', async () => {
    const { activities } = approvalActivities();
    await withWorker(env, activities, async (taskQueue) => {
      const handle = await start(taskQueue, newOrder());
      const refusal = await decide(handle, decision(STRANGER)).then(
        () => null,
        (e: unknown) => e,
      );
      expect(refusal).toBeInstanceOf(WorkflowUpdateFailedError);
      expect(apiErrorFromWorkflow(refusal)).toMatchObject({ code: 'CONFLICT', details: { field: 'approver_id', reason: 'is not an approver of a role still open' } });
      expect((await handle.describe()).status.name).toBe('RUNNING');
      await decide(handle, decision(FINANCE));
      expect(await decide(handle, decision(DIRECTOR))).toBe('approved');
      expect(await handle.result()).toEqual({ outcome: 'approved' });
    });
  });

  test('a purchase order never recorded as submitted (its transaction rolled back) ends the approval as cancelled', async () => {
    const { activities, calls } = approvalActivities({ submitted: false });
    await withWorker(env, activities, async (taskQueue) => {
      const handle = await start(taskQueue, newOrder());
      expect(await handle.result()).toEqual({ outcome: 'cancelled' });
      expect(await approvalStatus(handle)).toBe('cancelled');
    });
    expect(calls.map((call) => call.name)).toEqual(['purchaseOrderAwaitsApproval']);
  });
});
