import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { DeliveryRecoveryActivities } from '../../activities/delivery-recovery';
import { withActivityFailures } from '../../src/temporal/failures';
import type { deliveryRecovery } from '../../workflows/delivery-recovery';
import { createTimeSkippingEnv, recordingCalls, withWorker } from '../helpers/time-skipping';

// workflows/delivery-recovery.ts in skipped time, its activity mocked (wrapped as the worker wraps it).
let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createTimeSkippingEnv();
});
afterAll(() => env?.teardown());

let recoveryNumber = 0;
const newRecoveryId = () => `30000000-0000-4000-8000-${String(++recoveryNumber).padStart(12, '0')}`;

/** The batch step as it behaves: each call re-runs up to `batchSize` more of `total` deliveries (after `failing` failures). */
function recoveryActivities(total: number, failing = 0) {
  let requested = 0;
  return recordingCalls(
    env,
    withActivityFailures<DeliveryRecoveryActivities>({
      async rerunRecoveryBatch({ batchSize }) {
        if (failing-- > 0) throw new Error('Connection terminated unexpectedly');
        requested = Math.min(total, requested + batchSize);
        return { total, requested };
      },
    }),
  );
}

const recover = (taskQueue: string, recoveryId: string) =>
  env.client.workflow.execute<typeof deliveryRecovery>('deliveryRecovery', { taskQueue, workflowId: `delivery-recovery/${recoveryId}`, args: [{ recoveryId }] });

describe('deliveryRecovery in skipped time', () => {
  test('re-runs the deliveries 10 at a time until all are requested', async () => {
    const { activities, calls } = recoveryActivities(25);
    const recoveryId = newRecoveryId();
    await withWorker(env, activities, async (taskQueue) => {
      expect(await recover(taskQueue, recoveryId)).toEqual({ total: 25, requested: 25 });
    });
    expect(calls.map(({ name, args }) => ({ name, args }))).toEqual(Array(3).fill({ name: 'rerunRecoveryBatch', args: [{ recoveryId, batchSize: 10 }] }));
  });

  test('a recovery with nothing to re-run ends after one step', async () => {
    const { activities, calls } = recoveryActivities(0);
    await withWorker(env, activities, async (taskQueue) => {
      expect(await recover(taskQueue, newRecoveryId())).toEqual({ total: 0, requested: 0 });
    });
    expect(calls).toHaveLength(1);
  });

  test('a failing batch is retried (1 s, then 2 s later) and the recovery carries on from the recorded progress', async () => {
    const { activities, calls } = recoveryActivities(15, 2);
    await withWorker(env, activities, async (taskQueue) => {
      expect(await recover(taskQueue, newRecoveryId())).toEqual({ total: 15, requested: 15 });
    });
    expect(calls).toHaveLength(4);
    expect(calls[2]!.atMs - calls[0]!.atMs).toBeGreaterThanOrEqual(3000);
  });
});
