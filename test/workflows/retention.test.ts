import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { PruneInput, RetentionActivities } from '../../activities/retention';
import type { RetentionTarget } from '../../src/domain/retention';
import { withActivityFailures } from '../../src/temporal/failures';
import type { retention } from '../../workflows/retention';
import type { RetentionInput } from '../../workflows/retention.contract';
import { createTimeSkippingEnv, recordingCalls, withWorker } from '../helpers/time-skipping';

// workflows/retention.ts in skipped time, its activity mocked (wrapped as the worker wraps it).
let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createTimeSkippingEnv();
});
afterAll(() => env?.teardown());

const input: RetentionInput = { periods: { outboxDays: 30, rateLimitDays: 30, deliveryDays: 90 }, batchSize: 1000 };

/**
 * Each call of a target deletes the next count of its list; the last call of the list finishes the target. The
 * first call of `failingOnce` fails (a lock timeout) before deleting anything.
 */
function retentionActivities(deletions: Record<RetentionTarget, number[]>, failingOnce?: RetentionTarget) {
  const left = Object.fromEntries(Object.entries(deletions).map(([target, counts]) => [target, [...counts]])) as Record<RetentionTarget, number[]>;
  return recordingCalls(
    env,
    withActivityFailures<RetentionActivities>({
      async pruneExpired({ target }: PruneInput) {
        if (target === failingOnce) {
          failingOnce = undefined;
          throw new Error('canceling statement due to lock timeout');
        }
        const deleted = left[target].shift();
        if (deleted === undefined) throw new Error(`${target} was called after it finished`);
        return { deleted, finished: left[target].length === 0 };
      },
    }),
  );
}

const prune = (taskQueue: string, id: string) => env.client.workflow.execute<typeof retention>('retention', { taskQueue, workflowId: `retention/${id}`, args: [input] });

describe('retention in skipped time', () => {
  test('prunes each target until it is finished, deliveries first, and sums what it deleted', async () => {
    const { activities, calls } = retentionActivities({
      deliveries: [5000, 4000, 12],
      endpointHistory: [0],
      outbox: [7000, 3],
      rateLimitCounters: [40],
      recordCounts: [1],
      feedEvents: [2],
    });
    await withWorker(env, activities, async (taskQueue) => {
      expect(await prune(taskQueue, 'targets')).toEqual({ deliveries: 9012, endpointHistory: 0, outbox: 7003, rateLimitCounters: 40, recordCounts: 1, feedEvents: 2 });
    });
    expect(calls.map((call) => (call.args[0] as PruneInput).target)).toEqual([
      'deliveries',
      'deliveries',
      'deliveries',
      'endpointHistory',
      'outbox',
      'outbox',
      'rateLimitCounters',
      'recordCounts',
      'feedEvents',
    ]);
    // Each call works for at most 20 s, in batches of the configured size.
    expect(calls[0]!.args[0]).toEqual({ target: 'deliveries', periods: input.periods, batchSize: 1000, budgetMs: 20_000 });
  });

  test('a call that fails is retried 1 s later, and the run goes on from there', async () => {
    const { activities, calls } = retentionActivities({ deliveries: [10], endpointHistory: [0], outbox: [20], rateLimitCounters: [0], recordCounts: [0], feedEvents: [0] }, 'outbox');
    await withWorker(env, activities, async (taskQueue) => {
      expect(await prune(taskQueue, 'retry')).toEqual({ deliveries: 10, endpointHistory: 0, outbox: 20, rateLimitCounters: 0, recordCounts: 0, feedEvents: 0 });
    });
    const outbox = calls.filter((call) => (call.args[0] as PruneInput).target === 'outbox');
    expect(outbox).toHaveLength(2);
    expect(outbox[1]!.atMs - outbox[0]!.atMs).toBeGreaterThanOrEqual(1000);
  });
});
