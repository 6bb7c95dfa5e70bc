import { MockActivityEnvironment } from '@temporalio/testing';
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { FIRST_ATTEMPT_INLINE_MS, createDeliveryRunActivities } from '../../activities/webhook-delivery';
import { SecretBox } from '../../src/crypto/secret-box';
import { type AttemptRequest, DeliveryAttempts } from '../../src/delivery/attempts/attempt';
import { wakeHeld } from '../../src/delivery/endpoints/endpoint-admission';
import { releaseWaiting } from '../../src/delivery/endpoints/endpoints-service';
import { createWebhookSender } from '../../src/delivery/attempts/webhook-sender';
import { createLogger } from '../../src/logger';
import { createWorkerMetrics } from '../../src/metrics';
import { temporalDeliveryWorkflows } from '../../src/temporal/temporal-delivery-workflows';
import { type DeliveryRunStart, deliveryWorkflowId, type WebhookDeliveryInput } from '../../workflows/webhook-delivery.contract';
import { startReceiver, testCertificate, type TestReceiver } from '../helpers/https-receiver';
import { createTenant, envelope, sendInbound, startStack, type TestStack } from '../helpers/stack';
import { addApiKey, registerEndpoint } from '../helpers/webhooks';
import { waitFor } from '../helpers/processes';
import { holdRowLocks } from '../helpers/row-locks';

/**
 * Issue 61: a run's first workflow task makes the first attempt as a local activity and hands it off when the endpoint
 * is slower than FIRST_ATTEMPT_INLINE_MS (recorded in progress, still being sent). When that task is done again (its
 * completion refused, or it timed out on an overloaded worker), its local activity runs again, in the same worker or
 * another: it must await the attempt in flight, not send it again; so must a retry of an attempt's activity while its
 * first execution still sends. And an attempt's finish must not deadlock with an
 * admission at its endpoint (the engine's lock order), which cost a bench run a send twice. The stack has no worker: the dispatcher writes the
 * delivery and starts its run, and the test runs the run's activities itself, as two workers would, against the real
 * database and receiver.
 */
describe('an attempt sent once (issue 61)', () => {
  let stack: TestStack;
  let slow: TestReceiver;
  let answerAfterMs = FIRST_ATTEMPT_INLINE_MS + 2000;

  beforeAll(async () => {
    stack = await startStack({ worker: false, dispatcher: true });
    slow = await startReceiver();
    // Answers well after the hand-off, unless a test asks for another delay.
    slow.respondWith(() => ({ status: 200, body: '{"received":true}', delayMs: answerAfterMs }));
  });
  afterAll(async () => {
    await slow.close();
    await stack.close();
  });

  /** A worker's attempts and its run activities, as src/worker/worker.ts makes them. */
  function aWorker() {
    const { config, orm } = stack;
    const logger = createLogger(config.logLevel);
    const deliveryWorkflows = temporalDeliveryWorkflows(stack.temporal, config.temporal.taskQueues);
    const deliveryAttempts = new DeliveryAttempts({
      orm,
      secretBox: new SecretBox(config.encryptionKey),
      sender: createWebhookSender({ allowLoopback: true, timeoutMs: config.webhooks.timeoutMs, connectTimeoutMs: config.webhooks.connectTimeoutMs, ca: testCertificate().cert }),
      webhooks: config.webhooks,
      logger,
      metrics: createWorkerMetrics(orm),
      wake: (endpointId, deliveryIds) => wakeHeld(orm.em.fork(), deliveryWorkflows, endpointId, deliveryIds),
      releaseWaiting: (endpointId) => releaseWaiting(orm.em.fork(), deliveryWorkflows, endpointId),
    });
    return { deliveryAttempts, activities: createDeliveryRunActivities({ orm, logger, webhooks: config.webhooks, deliveryAttempts, deliveryWorkflows, publicBaseUrl: config.publicBaseUrl }) };
  }

  /** A delivery to the slow endpoint, written by the dispatcher, whose run no worker takes. */
  async function slowDelivery(empNumber: string): Promise<WebhookDeliveryInput> {
    const sender = await createTenant(stack.orm, ['admin']);
    const subscriber = await addApiKey(stack, sender);
    await registerEndpoint(stack, subscriber.key, { url: slow.url, event_types: ['employee.created'] });
    const sent = await sendInbound(stack.baseUrl, sender, envelope('employee.created', { emp_number: empNumber, name: 'Handed off', email: `${empNumber}@example.com`, employee_type: 'office' }));
    expect(sent.status).toBe(200);
    const [row] = await waitFor(
      async () => {
        const rows = await stack.em().execute<{ id: string; company_id: string; endpoint_id: string; event_type: string }[]>(
          'select id, company_id, endpoint_id, event_type from webhook_deliveries where company_id = ?',
          [sender.companyId],
        );
        return rows.length ? rows : null;
      },
      10_000,
      'the delivery written',
    );
    return { deliveryId: row!.id, companyId: row!.company_id, endpointId: row!.endpoint_id, eventType: row!.event_type };
  }

  const attemptsOf = (deliveryId: string) =>
    stack.em().execute<{ attempt_number: number; outcome: string }[]>('select attempt_number, outcome from webhook_delivery_attempts where delivery_id = ? order by attempt_number', [deliveryId]);

  it.each([
    ['in the same worker', false],
    ['in another worker', true],
  ])('a handed-off first attempt whose workflow task is done again %s: awaited, and the endpoint gets one request', async (_where, elsewhere) => {
    const input = await slowDelivery(`HANDOFF-${elsewhere ? 'B' : 'A'}`);
    const before = slow.requests.length;
    const first = aWorker();
    const task = { input, workflowId: deliveryWorkflowId(input.deliveryId), runAttempt: 1 };

    const made = (await new MockActivityEnvironment().run(first.activities.makeFirstAttempt, task)) as DeliveryRunStart;
    expect(made.first).toEqual({ kind: 'in_flight' });
    expect(made.plan.mode).toBe('schedule');
    expect(await attemptsOf(input.deliveryId)).toEqual([{ attempt_number: 0, outcome: 'in_progress' }]);

    // The task done again: its local activity runs anew, here or in another worker, while the attempt is still in flight.
    const again = elsewhere ? aWorker() : first;
    const redone = await new MockActivityEnvironment().run(again.activities.makeFirstAttempt, task);
    expect(redone).toEqual(made);
    const request: AttemptRequest = { deliveryId: input.deliveryId, attemptNumber: 0, trigger: 'automatic', nextAttemptInMs: made.plan.retryDelaysMs[0] ?? null };
    const answer = await new MockActivityEnvironment().run(again.activities.awaitDeliveryAttempt, request);
    expect(answer).toMatchObject({ statusCode: 200 });
    await first.deliveryAttempts.settled();

    expect(await attemptsOf(input.deliveryId)).toEqual([{ attempt_number: 0, outcome: 'succeeded' }]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(slow.requests.slice(before).map((request) => request.headers['x-webhook-id'])).toEqual([input.deliveryId]);
  }, 60_000);

  it("a first attempt made inline whose run's first task is done again in another worker before it is recorded: awaited, and the endpoint gets one request", async () => {
    // A worker paused (or too loaded) past the task's timeout while its first attempt, not handed off yet, was out.
    answerAfterMs = FIRST_ATTEMPT_INLINE_MS / 2;
    try {
      const input = await slowDelivery('INLINE-1');
      const before = slow.requests.length;
      const task = { input, workflowId: deliveryWorkflowId(input.deliveryId), runAttempt: 1 };
      const making = new MockActivityEnvironment().run(aWorker().activities.makeFirstAttempt, task);
      await waitFor(async () => (await attemptsOf(input.deliveryId)).length > 0 || null, 10_000, 'the attempt recorded in progress');
      expect(await attemptsOf(input.deliveryId)).toEqual([{ attempt_number: 0, outcome: 'in_progress' }]);

      const elsewhere = aWorker();
      const redone = (await new MockActivityEnvironment().run(elsewhere.activities.makeFirstAttempt, task)) as DeliveryRunStart;
      expect(redone.first).toEqual({ kind: 'in_flight' });
      const made = (await making) as DeliveryRunStart;
      expect(made.first).toMatchObject({ kind: 'delivered', statusCode: 200 });
      const request: AttemptRequest = { deliveryId: input.deliveryId, attemptNumber: 0, trigger: 'automatic', nextAttemptInMs: redone.plan.retryDelaysMs[0] ?? null };
      expect(await new MockActivityEnvironment().run(elsewhere.activities.awaitDeliveryAttempt, request)).toMatchObject({ statusCode: 200 });

      expect(await attemptsOf(input.deliveryId)).toEqual([{ attempt_number: 0, outcome: 'succeeded' }]);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(slow.requests.slice(before).map((request) => request.headers['x-webhook-id'])).toEqual([input.deliveryId]);
    } finally {
      answerAfterMs = FIRST_ATTEMPT_INLINE_MS + 2000;
    }
  }, 60_000);

  it.each([
    ['in the same worker', false],
    ['in another worker', true],
  ])('an attempt whose activity is retried %s while its first execution is still sending: awaited, and the endpoint gets one request', async (_where, elsewhere) => {
    // A worker paused, or too loaded to heartbeat in time: Temporal retries the activity while its execution still sends.
    const input = await slowDelivery(`RETRIED-${elsewhere ? 'B' : 'A'}`);
    const before = slow.requests.length;
    const first = aWorker();
    const request = { deliveryId: input.deliveryId, attemptNumber: 0, trigger: 'automatic' as const, nextAttemptInMs: null };
    const sending = new MockActivityEnvironment().run(first.activities.sendDeliveryAttempt, request);
    await waitFor(async () => (await attemptsOf(input.deliveryId)).length > 0 || null, 10_000, 'the attempt recorded in progress');
    expect(await attemptsOf(input.deliveryId)).toEqual([{ attempt_number: 0, outcome: 'in_progress' }]);

    const again = elsewhere ? aWorker() : first;
    const retried = new MockActivityEnvironment({ attempt: 2 }).run(again.activities.sendDeliveryAttempt, request);
    const [answered, answeredAgain] = await Promise.all([sending, retried]);
    expect(answered).toMatchObject({ statusCode: 200 });
    expect(answeredAgain).toEqual(answered);

    expect(await attemptsOf(input.deliveryId)).toEqual([{ attempt_number: 0, outcome: 'succeeded' }]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(slow.requests.slice(before).map((request) => request.headers['x-webhook-id'])).toEqual([input.deliveryId]);
  }, 60_000);

  it("finishes an attempt while the same delivery's next admission waits for its endpoint, without a deadlock", async () => {
    // The engine's lock order (src/delivery/README.md): a finish took the delivery's row and then its endpoint's, an
    // admission the endpoint's and then the delivery's; released together, PostgreSQL cancelled one of them.
    const input = await slowDelivery('LOCK-1');
    const { admission } = stack.config.webhooks;
    const begin = (client: Client) =>
      client.query('select admitted from begin_delivery_attempt($1, $2, null, $3, null, false, true, true, $4, $5, $6, $7, $8, 5000)', [
        input.deliveryId,
        randomUUID(),
        'automatic',
        input.companyId,
        input.endpointId,
        input.eventType,
        admission.maxInFlight,
        admission.slotLeaseMs,
      ]);
    const finish = (client: Client) =>
      client.query("select transition from finish_delivery_attempt($1, $2, 0, 'automatic', null, 'succeeded', 200, 5, null, null, null, false, true, 'healthy', $3, $4, $5, $6)", [
        input.deliveryId,
        randomUUID(),
        admission.failureThreshold,
        admission.cooldownMs,
        admission.maxCooldownMs,
        admission.maxInFlight,
      ]);
    const [admitting, finishing] = [new Client({ connectionString: stack.config.databaseUrl }), new Client({ connectionString: stack.config.databaseUrl })];
    await Promise.all([admitting.connect(), finishing.connect()]);
    // Attempt 0 admitted and in flight.
    expect((await begin(admitting)).rows).toEqual([{ admitted: true }]);
    const endpointLock = await holdRowLocks(stack.config.databaseUrl, 'select 1 from webhook_endpoints where id = $1 for update', [input.endpointId]);
    try {
      // The endpoint's row held: the next admission waits for it first, then the finish.
      const waiting = (n: number) => async () =>
        (await endpointLock.query('select count(*)::int as n from pg_stat_activity where datname = current_database() and cardinality(pg_blocking_pids(pid)) > 0')).rows[0].n >= n;
      const admitted = begin(admitting);
      await waitFor(waiting(1), 10_000, 'the admission to wait for the endpoint');
      const finished = finish(finishing);
      await waitFor(waiting(2), 10_000, 'the finish to wait');
      await endpointLock.release();
      const [admittedAgain, finishedOnce] = await Promise.allSettled([admitted, finished]);
      expect([admittedAgain.status, finishedOnce.status]).toEqual(['fulfilled', 'fulfilled']);
      expect(await attemptsOf(input.deliveryId)).toEqual([{ attempt_number: 0, outcome: 'succeeded' }]);
    } finally {
      await endpointLock.end();
      await Promise.all([admitting.end(), finishing.end()]);
    }
  }, 60_000);
});
