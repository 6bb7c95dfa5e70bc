import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import { retentionScheduleId, ensureRetentionSchedule } from '../../src/temporal/retention-schedule';
import type { RetentionResult } from '../../workflows/retention.contract';
import { waitFor } from '../helpers/processes';
import { createTenant, request, startStack, testConfig, type Tenant, type TestStack } from '../helpers/stack';

const DAY = 86_400_000;
const daysAgo = (days: number) => new Date(Date.now() - days * DAY);

/** Retention run by its Temporal Schedule on a real worker: old history goes, recent history and work in progress stay. */
describe('retention', () => {
  let stack: TestStack;
  let tenant: Tenant;
  let em: () => EntityManager;

  beforeAll(async () => {
    // Batches of 2 rows, so every target takes several statements.
    stack = await startStack({ dispatcher: false, config: await testConfig({ RETENTION_BATCH_SIZE: '2' }) });
    tenant = await createTenant(stack.orm, ['admin']);
    em = () => stack.em();
  });
  afterAll(() => stack.close());

  /** A real event (a customer created over REST), made as old as asked, with the UUIDv7 id it would have had. */
  async function event(createdDaysAgo: number, dispatchedDaysAgo: number | null): Promise<string> {
    const created = await request(stack.baseUrl, 'POST', '/api/v1/customers', { key: tenant.key, body: { name: `Retention ${uuidv7()}` } });
    const [{ id: eventId }] = await em().execute<{ id: string }[]>(`select id from outbox_events where data->>'id' = ?`, [created.body.id]);
    const id = uuidv7({ msecs: daysAgo(createdDaysAgo).getTime() });
    await em().execute('update outbox_events set id = ?, created_at = ?, updated_at = ?, dispatched_at = ? where id = ?', [
      id,
      daysAgo(createdDaysAgo),
      daysAgo(createdDaysAgo),
      dispatchedDaysAgo === null ? null : daysAgo(dispatchedDaysAgo),
      eventId,
    ]);
    return id;
  }

  async function delivery(endpointId: string, eventId: string, createdDaysAgo: number, status: string): Promise<string> {
    const id = uuidv7();
    const at = daysAgo(createdDaysAgo);
    await em().execute(
      `insert into webhook_deliveries (id, company_id, created_at, updated_at, endpoint_id, event_id, event_type, payload, status, attempt_count, delivered_at, failed_at)
       values (?, ?, ?, ?, ?, ?, 'customer.deleted', '{}', ?, 1, ?, ?)`,
      [id, tenant.companyId, at, at, endpointId, eventId, status, status === 'delivered' ? at : null, status === 'failed' ? at : null],
    );
    for (const attempt of [0, 1]) {
      await em().execute(
        `insert into webhook_delivery_attempts (id, company_id, created_at, updated_at, delivery_id, attempt_number, trigger, outcome) values (?, ?, ?, ?, ?, ?, 'automatic', 'retryable_failure')`,
        [uuidv7(), tenant.companyId, at, at, id, attempt],
      );
    }
    if (status === 'failed') {
      await em().execute(
        `insert into webhook_alerts (id, company_id, created_at, updated_at, delivery_id, endpoint_id, attempt_count, message) values (?, ?, ?, ?, ?, ?, 1, 'failed')`,
        [uuidv7(), tenant.companyId, at, at, id, endpointId],
      );
    }
    return id;
  }

  const ids = async (table: string, column = 'id') => (await em().execute<{ id: string }[]>(`select ${column}::text as id from ${table}`)).map((r) => r.id).sort();
  const total = async (table: string) =>
    Number((await em().execute<{ n: string }[]>('select coalesce(sum(n), 0) as n from record_counts where company_id = ? and table_name = ?', [tenant.companyId, table]))[0]!.n);

  it('deletes history past its period and keeps the rest', async () => {
    const endpointId = uuidv7();
    await em().execute(
      `insert into webhook_endpoints (id, company_id, created_at, updated_at, url, event_types, secret_sealed) values (?, ?, now(), now(), 'https://hooks.example.com/x', '{*}', 'sealed')`,
      [endpointId, tenant.companyId],
    );
    for (const [created, dispatched] of [[40, 40], [35, 34], [60, 59]] as const) await event(created, dispatched);
    const oldUndispatched = await event(40, null);
    const recentDispatched = await event(5, 5);
    const eventOfKeptDelivery = await event(100, 100);
    const eventsOfOldDeliveries = [await event(120, 120), await event(110, 110), await event(105, 105)];

    await delivery(endpointId, eventsOfOldDeliveries[0]!, 100, 'delivered');
    await delivery(endpointId, eventsOfOldDeliveries[1]!, 95, 'failed');
    await delivery(endpointId, eventsOfOldDeliveries[2]!, 92, 'cancelled');
    // Still being retried: never pruned, however old.
    const oldRetrying = await delivery(endpointId, eventOfKeptDelivery, 100, 'retrying');
    const recentDelivered = await delivery(endpointId, recentDispatched, 10, 'delivered');

    const idle = await createTenant(stack.orm, ['admin']);
    await em().execute(
      `insert into rate_limit_counters (api_key_id, policy, window_seconds, window_start, count) values
         (?, 'rest', 60, now() - interval '40 days', 5), (?, 'rest', 86400, now() - interval '32 days', 9),
         (?, 'rest', 3600, now() - interval '10 minutes', 3), (?, 'inbound', 86400, now() - interval '20 days', 1)`,
      [idle.apiKeyId, idle.apiKeyId, idle.apiKeyId, idle.apiKeyId],
    );
    // An endpoint's own alerts (disabled, re-enabled) and bulk recoveries: old resolved and completed ones go.
    const endpointAlert = async (resolvedDaysAgo: number | null) => {
      const id = uuidv7();
      await em().execute(
        `insert into webhook_alerts (id, company_id, created_at, updated_at, delivery_id, endpoint_id, attempt_count, message, kind, resolved_at)
         values (?, ?, now() - interval '100 days', now(), null, ?, 0, 'disabled', 'endpoint_disabled', ?)`,
        [id, tenant.companyId, endpointId, resolvedDaysAgo === null ? null : daysAgo(resolvedDaysAgo)],
      );
      return id;
    };
    const recovery = async (completedDaysAgo: number | null) => {
      const id = uuidv7();
      await em().execute(
        `insert into webhook_recoveries (id, company_id, created_at, updated_at, endpoint_id, since, status, delivery_ids, completed_at)
         values (?, ?, now() - interval '100 days', now(), ?, now() - interval '101 days', ?, '{}', ?)`,
        [id, tenant.companyId, endpointId, completedDaysAgo === null ? 'running' : 'completed', completedDaysAgo === null ? null : daysAgo(completedDaysAgo)],
      );
      return id;
    };
    await endpointAlert(95);
    const stillOpenAlert = await endpointAlert(null);
    const recentlyResolvedAlert = await endpointAlert(3);
    await recovery(95);
    await recovery(93);
    const runningRecovery = await recovery(null);
    const recentRecovery = await recovery(2);
    const deliveriesBefore = await total('webhook_deliveries');
    expect(deliveriesBefore).toBe(5);

    await ensureRetentionSchedule(stack.temporal, stack.config);
    const schedule = stack.temporal.schedule.getHandle(retentionScheduleId(stack.config.temporal.taskQueues));
    try {
      await schedule.trigger();
      const started = await waitFor(async () => (await schedule.describe()).info.recentActions[0]?.action.workflow, 20_000, 'the schedule to start a run');
      const result = (await stack.temporal.workflow.getHandle(started.workflowId, started.firstExecutionRunId).result()) as RetentionResult;
      expect(result).toMatchObject({ deliveries: 3, endpointHistory: 3, outbox: 6, rateLimitCounters: 2 });
    } finally {
      await schedule.delete();
    }

    expect(await ids('webhook_deliveries')).toEqual([oldRetrying, recentDelivered].sort());
    expect(await ids('webhook_delivery_attempts', 'delivery_id')).toEqual([oldRetrying, oldRetrying, recentDelivered, recentDelivered].sort());
    expect(await ids('webhook_alerts')).toEqual([stillOpenAlert, recentlyResolvedAlert].sort());
    expect(await ids('webhook_recoveries')).toEqual([runningRecovery, recentRecovery].sort());
    // Dispatched and old, and no delivery kept of them: gone (the old deliveries' events with them).
    expect(await ids('outbox_events')).toEqual([oldUndispatched, recentDispatched, eventOfKeptDelivery].sort());
    const counters = await em().execute<{ policy: string; window_seconds: number }[]>(
      'select policy, window_seconds from rate_limit_counters where api_key_id = ? order by policy, window_seconds',
      [idle.apiKeyId],
    );
    expect(counters).toEqual([
      { policy: 'inbound', window_seconds: 86400 },
      { policy: 'rest', window_seconds: 3600 },
    ]);
    // The counted totals followed the deletions, and were folded into one row per table.
    expect(await total('webhook_deliveries')).toBe(2);
    const rows = await em().execute<{ n: number }[]>(
      `select count(*)::int as n from record_counts where company_id = ? group by table_name having count(*) > 1`,
      [tenant.companyId],
    );
    expect(rows).toEqual([]);
  });
});
