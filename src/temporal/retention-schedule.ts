import { type Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import type { Config } from '../config';
import { RETENTION, type RetentionInput } from '../../workflows/retention.contract';
import type { TaskQueues } from '../task-queues';
import { taskQueueOf } from './task-queue-of';

/** The retention schedule of the workflows on `taskQueue`: one per deployment (and per test stack). */
export const retentionScheduleIdOn = (taskQueue: string) => `retention/${taskQueue}`;

/** The retention schedule of the configured queues: named after the task queue retention runs on. */
export const retentionScheduleId = (queues: TaskQueues) => retentionScheduleIdOn(taskQueueOf(RETENTION, queues));

/**
 * The Temporal Schedule that runs the retention workflow every RETENTION_EVERY_MINUTES: made when missing,
 * brought in line with the configuration when it exists (every worker calls this at start; any one may win).
 * A run still going when the next is due makes that one skip.
 */
export async function ensureRetentionSchedule(client: Client, config: Config): Promise<void> {
  const { taskQueues } = config.temporal;
  const { everyMinutes, batchSize, outboxDays, rateLimitDays, deliveryDays } = config.retention;
  const input: RetentionInput = { periods: { outboxDays, rateLimitDays, deliveryDays }, batchSize };
  const scheduleId = retentionScheduleId(taskQueues);
  const definition = {
    spec: { intervals: [{ every: `${everyMinutes} minutes` }] },
    action: { type: 'startWorkflow' as const, workflowType: RETENTION.name, taskQueue: taskQueueOf(RETENTION, taskQueues), workflowId: scheduleId, args: [input] },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
  };
  try {
    await client.schedule.create({ scheduleId, ...definition });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    await client.schedule.getHandle(scheduleId).update((previous) => ({ ...previous, ...definition, policies: { ...previous.policies, ...definition.policies } }));
  }
}
