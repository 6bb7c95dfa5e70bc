import { SETTINGS } from '../../src/config';
import { inboundSender } from '../helpers/api-client';

import { startReceiver, type ReceivedRequest, type TestReceiver } from '../helpers/https-receiver';
import { freePort } from '../helpers/ports';
import { waitFor } from '../helpers/processes';
import { createTenant, request, startStack, testConfig, type Tenant, type TestStack } from '../helpers/stack';
import { addApiKey, registerEndpoint } from '../helpers/webhooks';

let seq = 0;
const employeeData = () => ({ emp_number: `IN-${++seq}`, name: 'Dana Builder', email: 'dana@example.com', employee_type: 'site_worker' });

/**
 * Records are sent at most this often: a steady sync, below what this one process (API, dispatcher, worker and
 * receivers together, on a machine shared with PostgreSQL, Temporal and another test suite) delivers, so that the
 * figures show how the healthy endpoint's deliveries are treated, not a backlog of the test's own making. At 100 ms the
 * four dead endpoints' 40 deliveries a second, beside a CPU-heavy suite, put single records past 1 s in CI runs.
 */
const SEND_INTERVAL_MS = 200;

const quantile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * q))]!;

/**
 * Issue 43's scenario, on real PostgreSQL and Temporal with the default attempt deadline (30 s), retry schedule,
 * per-endpoint cap and breaker: a company's healthy endpoint gets 60 records sent one after another, alone; then the same company registers
 * four more endpoints for the same event, two whose ports refuse connections and two that accept and never answer,
 * and 60 more records go out. The healthy endpoint gets them as quickly as before.
 */
describe('isolation inside a company: dead endpoints do not slow its healthy one', () => {
  let stack: TestStack;
  const receivers: TestReceiver[] = [];

  beforeAll(async () => {
    // The service's own attempt deadline and retry schedule, as a user has them.
    stack = await startStack({ config: await testConfig({ WEBHOOK_TIMEOUT_MS: SETTINGS.WEBHOOK_TIMEOUT_MS.default, WEBHOOK_RETRY_SCHEDULE: SETTINGS.WEBHOOK_RETRY_SCHEDULE.default }) });
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await stack.close();
  });

  /**
   * Sends 60 employee.created one after another, one every SEND_INTERVAL_MS at most (an ERP's steady sync); each one's
   * time from the request's answer to its receipt.
   */
  async function sixtyRecords(company: Tenant, healthy: TestReceiver & { byEvent: Map<string, number> }): Promise<number[]> {
    const erp = inboundSender(stack, company);
    const answered = new Map<string, number>();
    for (let i = 0; i < 60; i++) {
      const next = Date.now() + SEND_INTERVAL_MS;
      const sent = await erp.send('employee.created', employeeData());
      expect(sent.status).toBe(200);
      answered.set(sent.body.event_id, Date.now());
      await new Promise((resolve) => setTimeout(resolve, next - Date.now()));
    }
    await waitFor(async () => [...answered.keys()].every((id) => healthy.byEvent.has(id)), 120_000, 'the healthy endpoint to receive the 60');
    return [...answered].map(([id, at]) => healthy.byEvent.get(id)! - at);
  }

  it('delivers to the healthy endpoint as quickly with four dead endpoints beside it, each record once', async () => {
    const company = await createTenant(stack.orm, ['admin']);
    const subscriber = await addApiKey(stack, company);
    const healthy = Object.assign(await startReceiver(), { byEvent: new Map<string, number>(), byId: new Map<string, number>() });
    receivers.push(healthy);
    healthy.respondWith((request: ReceivedRequest) => {
      const eventId = (JSON.parse(request.body) as { event_id: string }).event_id;
      if (!healthy.byEvent.has(eventId)) healthy.byEvent.set(eventId, request.receivedAt);
      const webhookId = String(request.headers['x-webhook-id']);
      healthy.byId.set(webhookId, (healthy.byId.get(webhookId) ?? 0) + 1);
      return { status: 200 };
    });
    const healthyEndpoint = await registerEndpoint(stack, subscriber.key, { url: healthy.url, event_types: ['employee.created'] });

    const alone = await sixtyRecords(company, healthy);

    const hanging = await Promise.all([0, 1].map(() => startReceiver()));
    receivers.push(...hanging);
    for (const hook of hanging) hook.respondWith(() => ({ status: 200, hang: true }));
    const refusing = [await freePort(), await freePort()].map((port) => `https://localhost:${port}/hook`);
    for (const url of [...hanging.map((h) => h.url), ...refusing]) await registerEndpoint(stack, subscriber.key, { url, event_types: ['employee.created'] });

    const beside = await sixtyRecords(company, healthy);

    const figures = (latencies: number[]) => ({ p50: quantile(latencies, 0.5), max: Math.max(...latencies) });
    const [before, after] = [figures(alone), figures(beside)];
    // Where the healthy deliveries' time went, to read a slow run by: commit → delivery written, written → first attempt recorded.
    const stages = await stack.em().getConnection().execute<{ written_ms: number; attempted_ms: number }[]>(
      `select (extract(epoch from d.created_at - o.created_at) * 1000)::float8 as written_ms, (extract(epoch from a.created_at - d.created_at) * 1000)::float8 as attempted_ms
         from webhook_deliveries d join outbox_events o on o.id = d.event_id join webhook_delivery_attempts a on a.delivery_id = d.id and a.attempt_number = 0
        where d.endpoint_id = ? order by d.created_at`,
      [healthyEndpoint.id],
    );
    const stage = (rows: typeof stages, key: 'written_ms' | 'attempted_ms') => figures(rows.map((row) => Math.round(row[key])));
    const [first, second] = [stages.slice(0, 60), stages.slice(60)];
    // Attempts at the healthy endpoint that did not succeed: what a slow record met, if any.
    const unsuccessful = await stack.em().getConnection().execute<{ attempt_number: number; outcome: string; status_code: number | null; error: string | null; duration_ms: number | null }[]>(
      `select a.attempt_number, a.outcome, a.status_code, a.error, a.duration_ms from webhook_delivery_attempts a join webhook_deliveries d on d.id = a.delivery_id
        where d.endpoint_id = ? and a.outcome <> 'succeeded' order by a.created_at`,
      [healthyEndpoint.id],
    );
    console.log(
      `Healthy endpoint, 60 records one after another: alone p50 ${before.p50} / max ${before.max} ms; beside four dead endpoints p50 ${after.p50} / max ${after.max} ms\n` +
        `  commit → written: alone ${JSON.stringify(stage(first, 'written_ms'))}, beside ${JSON.stringify(stage(second, 'written_ms'))}; ` +
        `written → first attempt: alone ${JSON.stringify(stage(first, 'attempted_ms'))}, beside ${JSON.stringify(stage(second, 'attempted_ms'))}; ` +
        `attempts not succeeded: ${JSON.stringify(unsuccessful)}`,
    );
    expect(after.p50).toBeLessThanOrEqual(Math.max(1.5 * before.p50, 1_000));
    expect(after.max).toBeLessThanOrEqual(Math.max(1.5 * before.max, 1_000));
    // Each record once per X-Webhook-ID.
    expect(healthy.byId.size).toBe(120);
    expect([...healthy.byId.values()].every((count) => count === 1)).toBe(true);
  }, 600_000);

  it("writes a new event for one endpoint at once while another endpoint's backlog waits in the outbox for its room", async () => {
    const company = await createTenant(stack.orm, ['admin']);
    const subscriber = await addApiKey(stack, company);
    // A slow endpoint that answers every request, in 400 ms: healthy (its attempts come back within a second), so what
    // its pipeline has no room for waits in the outbox with its events.
    const slow = Object.assign(await startReceiver(), { byId: new Map<string, number>() });
    receivers.push(slow);
    slow.respondWith((request: ReceivedRequest) => {
      const webhookId = String(request.headers['x-webhook-id']);
      slow.byId.set(webhookId, (slow.byId.get(webhookId) ?? 0) + 1);
      return { status: 200, delayMs: 400 };
    });
    const other = Object.assign(await startReceiver(), { byEvent: new Map<string, number>() });
    receivers.push(other);
    // Another endpoint, slow too (150 ms): what its own pipeline has no room for waits for its room, not behind the first’s.
    other.respondWith((request: ReceivedRequest) => {
      other.byEvent.set((JSON.parse(request.body) as { event_id: string }).event_id, request.receivedAt);
      return { status: 200, delayMs: 150 };
    });
    const slowEndpoint = await registerEndpoint(stack, subscriber.key, { url: slow.url, event_types: ['employee.created'] });
    const otherEndpoint = await registerEndpoint(stack, subscriber.key, { url: other.url, event_types: ['customer.created'] });
    const delivered = async (endpointId: string) =>
      Number((await stack.em().execute<{ count: string }[]>("select count(*) as count from webhook_deliveries where endpoint_id = ? and status = 'delivered'", [endpointId]))[0]!.count);
    const erp = inboundSender(stack, company);
    // Each endpoint's first delivery: until one is delivered, an endpoint has one run and what it leaves is deferred.
    expect((await erp.send('employee.created', employeeData())).status).toBe(200);
    const first = await erp.send('customer.created', { name: 'Harbour Holdings', type: 'commercial', email: 'info@harbour.example' });
    expect(first.status).toBe(200);
    await waitFor(async () => (await delivered(slowEndpoint.id)) === 1 && (await delivered(otherEndpoint.id)) === 1, 30_000, 'each endpoint’s first delivery');

    // 250 records for the slow endpoint, eight senders at once: more than a company's claim of events, all waiting.
    let sent = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (sent < 250) {
          sent++;
          expect((await erp.send('employee.created', employeeData())).status).toBe(200);
        }
      }),
    );
    const waiting = async () =>
      Number((await stack.em().execute<{ count: string }[]>('select count(*) as count from outbox_events where company_id = ? and waits_for is not null and dispatched_at is null', [company.companyId]))[0]!.count);
    await waitFor(async () => (await waiting()) > 100, 10_000, 'over 100 of the company’s events waiting for the slow endpoint’s room');

    // 20 new events for the other endpoint, more than its pipeline (8): the rest wait for its room, beside the first's.
    const answered = new Map<string, number>();
    for (let i = 0; i < 20; i++) {
      const customer = await erp.send('customer.created', { name: `Harbour Holdings ${i}`, type: 'commercial', email: 'info@harbour.example' });
      expect(customer.status).toBe(200);
      answered.set(customer.body.event_id, Date.now());
    }
    await waitFor(async () => [...answered.keys()].every((id) => other.byEvent.has(id)), 60_000, 'the other endpoint to receive the 20');
    const latencies = [...answered].map(([id, at]) => other.byEvent.get(id)! - at);
    const stillWaiting = await waiting();
    console.log(
      `20 new events for another endpoint arrived ${Math.min(...latencies)}–${Math.max(...latencies)} ms after their answers, with ${stillWaiting} events still waiting for the slow endpoint`,
    );
    // Behind the slow endpoint's waiting events they would have come only once those were deferred, after waiting 10 s
    // (none would still wait then).
    expect(Math.max(...latencies)).toBeLessThan(6_000);
    expect(stillWaiting).toBeGreaterThan(0);

    // The slow endpoint gets every one of its 250 (and its first) in its own time, each once.
    await waitFor(async () => (await delivered(slowEndpoint.id)) === 251, 120_000, 'all 251 of the slow endpoint’s deliveries to be delivered');
    expect(slow.byId.size).toBe(251);
    expect([...slow.byId.values()].every((count) => count === 1)).toBe(true);
  }, 300_000);

  it('ends what waits for an endpoint within seconds of its being disabled or deleted, each with its reason', async () => {
    const company = await createTenant(stack.orm, ['admin']);
    const subscriber = await addApiKey(stack, company);
    // Two endpoints whose ports refuse connections: more deliveries than their runs, so some wait deferred.
    const [disabled, deleted] = await Promise.all(
      [0, 1].map(async () => registerEndpoint(stack, subscriber.key, { url: `https://localhost:${await freePort()}/hook`, event_types: ['employee.created'] })),
    );
    const erp = inboundSender(stack, company);
    for (let i = 0; i < 20; i++) expect((await erp.send('employee.created', employeeData())).status).toBe(200);
    const states = (endpointId: string) =>
      stack.em().execute<{ id: string; status: string; deferred: boolean; held: boolean; attempts: number; last_error: string | null }[]>(
        'select id, status, deferred_since is not null as deferred, held_until is not null as held, attempt_count as attempts, last_error from webhook_deliveries where endpoint_id = ? order by created_at',
        [endpointId],
      );
    // Each endpoint has runs waiting for their next retry (a minute away) and deliveries deferred behind them.
    const before = await waitFor(
      async () => {
        const both = await Promise.all([disabled.id, deleted.id].map(states));
        return both.every((rows) => rows.length === 20 && rows.some((r) => r.status === 'retrying') && rows.some((r) => r.deferred)) && both;
      },
      60_000,
      'runs retrying and deliveries deferred at both endpoints',
    );

    const endedAt = Date.now();
    expect((await request(stack.baseUrl, 'PUT', `/api/v1/webhook-endpoints/${disabled.id}`, { key: subscriber.key, body: { status: 'disabled' } })).status).toBe(200);
    expect((await request(stack.baseUrl, 'DELETE', `/api/v1/webhook-endpoints/${deleted.id}`, { key: subscriber.key })).status).toBe(204);
    let last: unknown;
    const after = await waitFor(
      async () => {
        const both = await Promise.all([disabled.id, deleted.id].map(states));
        last = both;
        return both.every((rows) => rows.every((r) => r.status === 'failed' || r.status === 'cancelled')) && both;
      },
      15_000,
      'every delivery of both endpoints to end',
    ).catch((error: Error) => {
      throw new Error(`${error.message}; last seen: ${JSON.stringify(last)}`);
    });
    console.log(`Both endpoints' 40 deliveries ended ${Date.now() - endedAt} ms after the endpoints were disabled and deleted`);
    for (const [i, word] of ['disabled', 'deleted'].entries()) {
      const rows = after[i]!;
      // Deferred ones (never attempted) are cancelled, saying why; the runs fail at their next attempt, made at once
      // without sending. Both kinds were there when the endpoint ended.
      const cancelledIds = new Set(rows.filter((r) => r.status === 'cancelled').map((r) => r.id));
      expect(before[i]!.filter((r) => !r.deferred).some((r) => !cancelledIds.has(r.id))).toBe(true);
      expect(cancelledIds.size).toBeGreaterThan(0);
      const reasons = rows.map((r) => (r.status === 'cancelled' ? r.last_error?.startsWith(`the endpoint was ${word}`) : r.last_error?.startsWith(`endpoint is ${word}`)));
      expect({ rows, reasons }).toEqual({ rows, reasons: rows.map(() => true) });
      // As REST shows one of each.
      const cancelled = rows.find((r) => r.status === 'cancelled')!;
      const shown = await request(stack.baseUrl, 'GET', `/api/v1/webhook-deliveries/${cancelled.id}`, { key: subscriber.key });
      expect(shown.body).toMatchObject({ status: 'cancelled', attempt_count: 0, last_error: expect.stringContaining(`the endpoint was ${word}`) });
    }
    // Nothing of theirs counts any more: none deferred or held.
    const [waiting] = await stack.em().execute<{ count: string }[]>(
      'select count(*) as count from webhook_deliveries where endpoint_id in (?, ?) and (deferred_since is not null or held_until is not null)',
      [disabled.id, deleted.id],
    );
    expect(Number(waiting!.count)).toBe(0);
  }, 120_000);

  it('ends the retry waits of an endpoint a 410 disabled at once, not at their next retry', async () => {
    const company = await createTenant(stack.orm, ['admin']);
    const subscriber = await addApiKey(stack, company);
    const hook = await startReceiver();
    receivers.push(hook);
    // The first three deliveries meet a 503 (their next attempt a minute away); the fourth a 410 Gone.
    let answered = 0;
    hook.respondWith(() => ({ status: ++answered <= 3 ? 503 : 410 }));
    const endpoint = await registerEndpoint(stack, subscriber.key, { url: hook.url, event_types: ['employee.created'] });
    const erp = inboundSender(stack, company);
    for (let i = 0; i < 3; i++) expect((await erp.send('employee.created', employeeData())).status).toBe(200);
    const statuses = () =>
      stack.em().execute<{ status: string; last_error: string | null }[]>('select status, last_error from webhook_deliveries where endpoint_id = ? order by created_at', [endpoint.id]);
    await waitFor(async () => (await statuses()).filter((d) => d.status === 'retrying').length === 3, 30_000, 'three deliveries waiting for their retry');

    expect((await erp.send('employee.created', employeeData())).status).toBe(200);
    const ended = await waitFor(async () => {
      const rows = await statuses();
      return rows.length === 4 && rows.every((d) => d.status === 'failed') && rows;
    }, 20_000, 'every delivery to fail once the 410 disabled the endpoint');
    // The fourth met the 410; the three others made their second attempt at once, without a request.
    expect(ended.map((d) => d.last_error)).toEqual([
      ...Array(3).fill(expect.stringMatching(/^endpoint is disabled: The endpoint answered 410 Gone/)),
      expect.stringContaining('410'),
    ]);
    expect(answered).toBe(4);
  }, 120_000);
});
