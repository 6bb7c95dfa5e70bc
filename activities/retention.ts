import { Context } from '@temporalio/activity';
import type { EntityManager } from '@mikro-orm/postgresql';
import { pruneBatch, type RetentionPeriods, type RetentionTarget } from '../src/domain/retention';
import type { ActivityDeps } from './deps';

export interface PruneInput {
  target: RetentionTarget;
  periods: RetentionPeriods;
  batchSize: number;
  /** How long one call keeps deleting batches before it hands back to the workflow. */
  budgetMs: number;
}

export interface PruneResult {
  deleted: number;
  /** Nothing more of the target is due. */
  finished: boolean;
}

export function createRetentionActivities({ orm, logger }: ActivityDeps) {
  return {
    /**
     * Deletes what is due of one target, batch after batch (each its own short transaction), heartbeating
     * between them, for up to `budgetMs`. Idempotent: what is due is decided anew from the rows each time.
     */
    async pruneExpired(input: PruneInput): Promise<PruneResult> {
      const started = Date.now();
      let deleted = 0;
      for (;;) {
        const n = await pruneBatch(orm.em.fork() as EntityManager, input.target, input.periods, input.batchSize);
        deleted += n;
        Context.current().heartbeat(deleted);
        if (n < input.batchSize) {
          if (deleted) logger.info({ target: input.target, deleted }, 'retention pruned');
          return { deleted, finished: true };
        }
        if (Date.now() - started >= input.budgetMs) return { deleted, finished: false };
      }
    },
  };
}

export type RetentionActivities = ReturnType<typeof createRetentionActivities>;
