import { type Client, ScheduleNotFoundError } from '@temporalio/client';
import { type SearchAttributePair, TypedSearchAttributes } from '@temporalio/common';
import type { Logger } from '../logger';
import { fairnessOf } from './fairness';
import { retentionScheduleIdOn } from './retention-schedule';
import { COMPANY_ID } from '../../workflows/search-attributes';
import type { TaskQueues } from '../task-queues';
import { taskQueueOf, workflowNamed } from './task-queue-of';

/**
 * Moves every schedule whose action starts runs on `fromQueue` (a queue of an older version) to the queue its
 * workflow runs on now, with its company's fairness key: a report schedule's next run starts there. The retention
 * schedule of `fromQueue` is deleted instead: every worker makes the one of the current queues at start. A schedule
 * of a workflow type this version does not know is left as it is, and logged. Idempotent: replicas may run it at
 * once. Returns how many schedules it moved or deleted.
 */
export async function moveSchedulesOff(client: Client, fromQueue: string, queues: TaskQueues, logger: Logger): Promise<number> {
  let changed = 0;
  for await (const summary of client.schedule.list()) {
    const handle = client.schedule.getHandle(summary.scheduleId);
    try {
      const { action } = await handle.describe();
      if (action.taskQueue !== fromQueue) continue;
      if (summary.scheduleId === retentionScheduleIdOn(fromQueue)) {
        await handle.delete();
      } else {
        const workflow = workflowNamed(action.workflowType);
        if (!workflow) {
          logger.warn({ scheduleId: summary.scheduleId, workflowType: action.workflowType, fromQueue }, 'schedule of an unknown workflow type left on the old task queue');
          continue;
        }
        const taskQueue = taskQueueOf(workflow, queues);
        const companyId = companyOf(action.typedSearchAttributes);
        await handle.update((previous) => ({
          ...previous,
          action: { ...previous.action, taskQueue, ...(companyId ? { priority: { ...previous.action.priority, ...fairnessOf(companyId) } } : {}) },
        }));
      }
      changed++;
    } catch (error) {
      // Deleted meanwhile (by its company, or another replica's move of the retention schedule).
      if (!(error instanceof ScheduleNotFoundError)) throw error;
    }
  }
  return changed;
}

/** The CompanyId search attribute the runs of a schedule start with, if any. */
function companyOf(attributes: TypedSearchAttributes | SearchAttributePair[] | undefined): string | undefined {
  if (attributes instanceof TypedSearchAttributes) return attributes.get(COMPANY_ID);
  return attributes?.find((pair) => pair.key.name === COMPANY_ID.name)?.value as string | undefined;
}

/** How many runs are open on `taskQueue`, by visibility (seconds behind at most). */
export async function openRunsOn(client: Client, taskQueue: string): Promise<number> {
  const { count } = await client.workflow.count(`TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`);
  return count;
}
