import { MockActivityEnvironment } from '@temporalio/testing';
import { FIRST_ATTEMPT_INLINE_MS, createDeliveryRunActivities } from '../../activities/webhook-delivery';
import { SecretBox } from '../../src/crypto/secret-box';
import { type AttemptRequest, DeliveryAttempts } from '../../src/delivery/attempt';
import { wakeHeld } from '../../src/delivery/endpoint-admission';
import { releaseWaiting } from '../../src/delivery/endpoints-service';
import { createWebhookSender } from '../../src/delivery/webhook-sender';
import { createLogger } from '../../src/logger';
import { createWorkerMetrics } from '../../src/metrics';
import { temporalDeliveryWorkflows } from '../../src/temporal/temporal-delivery-workflows';
import { type DeliveryRunStart, deliveryWorkflowId, type WebhookDeliveryInput } from '../../workflows/webhook-delivery.contract';
import { startReceiver, testCertificate, type TestReceiver } from '../helpers/https-receiver';
import { createTenant, envelope, sendInbound, startStack, type TestStack } from '../helpers/stack';
import { addApiKey, registerEndpoint } from '../helpers/webhooks';
import { waitFor } from '../helpers/processes';

/**
 * Issue 61: a run's first workflow task makes the first attempt as a local activity and hands it off when the endpoint
 * is slower than FIRST_ATTEMPT_INLINE_MS (recorded in progress, still being sent). When that task is done again (its
 * completion refused, or it timed out on an overloaded worker), its local activity runs again, in the same worker or
 * another: it must await the attempt in flight, not send it again. The stack has no worker: the dispatcher writes the
 * delivery and starts its run, and the test runs the run's activities itself, as two workers would, against the real
 * database and receiver.
 */
describe('a handed-off first attempt, its workflow task done again', () => {
  let stack: TestStack;
  let slow: TestReceiver;

  beforeAll(async () => {
    stack = await startStack({ worker: false, dispatcher: true });
    slow = await startReceiver();
    // Answers well after the hand-off.
    slow.respondWith(() => ({ status: 200, body: '{"received":true}', delayMs: FIRST_ATTEMPT_INLINE_MS + 2000 }));
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
  ])('%s: awaits the attempt in flight, and the endpoint gets one request', async (_where, elsewhere) => {
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
});
