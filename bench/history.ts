import type { Client as TemporalClient } from '@temporalio/client';
import { performance } from 'node:perf_hooks';
import type { Pool } from 'pg';
import { retentionScheduleId } from '../src/temporal/retention-schedule';
import type { TaskQueues } from '../src/task-queues';
import { summary } from './http-load';

/**
 * `count` deliveries of an endpoint finished 100 to 200 days ago (older than the 90-day retention period),
 * each with one attempt: a year of a busy tenant's delivery log.
 */
export async function seedOldDeliveries(db: Pool, companyId: string, endpointId: string, count: number): Promise<void> {
  const batch = 100_000;
  for (let start = 0; start < count; start += batch) {
    await db.query(
      `with made as (
         insert into webhook_deliveries (id, company_id, created_at, updated_at, endpoint_id, event_type, payload, status, attempt_count, last_status_code, delivered_at)
         select gen_random_uuid(), $1, at, at, $2, 'customer.created', '{"old":true}', 'delivered', 1, 200, at
           from generate_series($3::int, $4::int) as i,
                lateral (select now() - interval '200 days' + i * (interval '100 days' / $5::int) as at) as t
         returning id, company_id, created_at)
       insert into webhook_delivery_attempts (id, company_id, created_at, updated_at, delivery_id, attempt_number, trigger, outcome, status_code, finished_at)
       select gen_random_uuid(), company_id, created_at, created_at, id, 0, 'automatic', 'succeeded', 200, created_at from made`,
      [companyId, endpointId, start, Math.min(count, start + batch) - 1, count],
    );
  }
  await db.query('vacuum analyze webhook_deliveries, webhook_delivery_attempts');
}

/** Latency of GET /api/v1/webhook-deliveries?limit=50 (newest first, with the exact total), one at a time. */
export async function deliveryListLatency(apiUrl: string, key: () => string, samples: number): Promise<{ p50: number; p99: number; max: number }> {
  const latencies: number[] = [];
  for (let i = 0; i < samples + 3; i++) {
    const started = performance.now();
    const response = await fetch(`${apiUrl}/api/v1/webhook-deliveries?limit=50`, { headers: { 'X-API-Key': key() } });
    await response.text();
    if (response.status !== 200) throw new Error(`webhook-deliveries answered ${response.status}`);
    // The first few warm the plan cache.
    if (i >= 3) latencies.push(performance.now() - started);
  }
  return summary(latencies);
}

/** Triggers the retention schedule the worker made and waits for that run; returns its duration in seconds. */
export async function runRetention(temporal: TemporalClient, taskQueues: TaskQueues): Promise<{ seconds: number; deleted: Record<string, number> }> {
  const schedule = temporal.schedule.getHandle(retentionScheduleId(taskQueues));
  const before = (await schedule.describe()).info.recentActions.length;
  const started = performance.now();
  await schedule.trigger();
  let action: { workflowId: string; firstExecutionRunId: string } | undefined;
  while (!action) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const { recentActions } = (await schedule.describe()).info;
    if (recentActions.length > before) action = recentActions.at(-1)!.action.workflow;
  }
  const deleted = (await temporal.workflow.getHandle(action.workflowId, action.firstExecutionRunId).result()) as Record<string, number>;
  return { seconds: (performance.now() - started) / 1000, deleted };
}
