import { proxyActivities } from '@temporalio/workflow';
import type { RetentionActivities } from '../activities/retention';
import type { RetentionTarget } from '../src/domain/retention';
import type { RetentionInput, RetentionResult } from './retention.contract';

/** Deliveries first: an outbox event is kept while a delivery of it is. Feed events last: a run begun before they were a target ends as it began. */
const TARGETS: readonly RetentionTarget[] = ['deliveries', 'endpointHistory', 'outbox', 'rateLimitCounters', 'recordCounts', 'feedEvents'];

const { pruneExpired } = proxyActivities<RetentionActivities>({
  startToCloseTimeout: '5 minutes',
  // A worker that dies mid-call is noticed within seconds; the next attempt carries on from the rows.
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
});

/**
 * Deletes history past its retention period (run by the Temporal Schedule `retention/<task queue>`): finished
 * deliveries with their attempts and alerts, resolved endpoint alerts and completed recoveries, dispatched outbox events, expired rate-limit counters, old
 * feed events; and folds record_counts. Each activity call deletes for at most 20 seconds in bounded batches, so a large backlog is
 * worked off in steps that each show in the history.
 */
export async function retention(input: RetentionInput): Promise<RetentionResult> {
  const deleted = Object.fromEntries(TARGETS.map((t) => [t, 0])) as RetentionResult;
  for (const target of TARGETS) {
    for (;;) {
      const result = await pruneExpired({ target, periods: input.periods, batchSize: input.batchSize, budgetMs: 20_000 });
      deleted[target] += result.deleted;
      if (result.finished) break;
    }
  }
  return deleted;
}
