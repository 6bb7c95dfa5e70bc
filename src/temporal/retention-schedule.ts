import { type Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import type { Config } from '../config';
import { RETENTION, type RetentionInput } from '../../workflows/retention.contract';

export const retentionScheduleId = (taskQueue: string) => `retention/${taskQueue}`;

/**
 * The Temporal Schedule that runs the retention workflow every RETENTION_EVERY_MINUTES: made when missing,
 * brought in line with the configuration when it exists (every worker calls this at start; any one may win).
 * A run still going when the next is due makes that one skip.
 */
export async function ensureRetentionSchedule(client: Client, config: Config): Promise<void> {
  const { taskQueue } = config.temporal;
  const { everyMinutes, batchSize, outboxDays, rateLimitDays, deliveryDays } = config.retention;
  const input: RetentionInput = { periods: { outboxDays, rateLimitDays, deliveryDays }, batchSize };
  const definition = {
    spec: { intervals: [{ every: `${everyMinutes} minutes` }] },
    action: { type: 'startWorkflow' as const, workflowType: RETENTION, taskQueue, workflowId: retentionScheduleId(taskQueue), args: [input] },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
  };
  try {
    await client.schedule.create({ scheduleId: retentionScheduleId(taskQueue), ...definition });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    await client.schedule.getHandle(retentionScheduleId(taskQueue)).update((previous) => ({ ...previous, ...definition, policies: { ...previous.policies, ...definition.policies } }));
  }
}
