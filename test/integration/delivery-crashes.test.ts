import { OutboxDispatcher } from '../../src/delivery/outbox/dispatcher';
import { deliveryIdFor } from '../../src/delivery/outbox/fan-out';
import { createLogger } from '../../src/logger';
import { temporalDeliveryWorkflows } from '../../src/temporal/temporal-delivery-workflows';
import { deliveryWorkflowId } from '../../workflows/webhook-delivery.contract';
import { startWorker } from '../../src/worker/worker';
import { startReceiver, testCertificate, type TestReceiver } from '../helpers/https-receiver';
import { spawnEntryPoint, stopProcess, waitFor, workerStarted } from '../helpers/processes';
import { createTenant, envelope, processEnvOf, sendInbound, startStack, type Tenant, type TestStack } from '../helpers/stack';
import { addApiKey, deliveryIdsOf, dispatcherOptions, registerEndpoint, verifiedAsReceiver, waitForDeliveryStatus } from '../helpers/webhooks';

let seq = 0;
const employee = () => envelope('employee.created', { emp_number: `CRASH-${++seq}`, name: 'Crash Test', email: 'c@example.com', employee_type: 'office' });

/** The stack's process environment, delivering to the test receiver quickly. */
const processEnv = (stack: TestStack): Record<string, string> => ({
  ...processEnvOf(stack),
  WEBHOOK_ALLOW_LOOPBACK: 'true',
  WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2,0.2,0.2',
  NODE_EXTRA_CA_CERTS: testCertificate().certFile,
});

describe('deliveries survive crashes', () => {
  let stack: TestStack;
  let sender: Tenant;
  let subscriber: Tenant;
  let hook: TestReceiver;

  beforeEach(async () => {
    hook = await startReceiver();
  });
  afterEach(() => hook.close());

  /** A stack, a company with a key that makes changes and one that owns an endpoint at the receiver. */
  async function setUp(options: { worker: boolean; dispatcher: boolean }) {
    stack = await startStack(options);
    sender = await createTenant(stack.orm, ['admin']);
    subscriber = await addApiKey(stack, sender);
    return registerEndpoint(stack, subscriber.key, { url: hook.url, event_types: ['employee.created'] });
  }

  it('a worker killed with SIGKILL in the middle of an attempt: the next worker completes the delivery', async () => {
    // The dispatcher runs here; the worker runs as a process of its own that can really be killed.
    hook.respondWith((_, i) => (i === 0 ? { status: 200, hang: true } : { status: 200 }));
    const endpoint = await setUp({ worker: false, dispatcher: true });

    const first = spawnEntryPoint('worker/main.ts', processEnv(stack));
    let second: ReturnType<typeof spawnEntryPoint> | undefined;
    try {
      await workerStarted(first, 'first');
      await sendInbound(stack.baseUrl, sender, employee());
      const [inFlight] = await hook.waitForRequests(1, 30_000);
      // While the subscriber keeps it waiting, the attempt heartbeats; kill the worker once Temporal has one.
      const workflow = stack.temporal.workflow.getHandle(deliveryWorkflowId(String(inFlight!.headers['x-webhook-id'])));
      await waitFor(async () => (await workflow.describe()).raw.pendingActivities?.[0]?.lastHeartbeatTime, 15_000, 'a heartbeat of the attempt');
      await stopProcess(first, 'SIGKILL');

      second = spawnEntryPoint('worker/main.ts', processEnv(stack));

      await workerStarted(second, 'second');
      // The attempt's heartbeats stop with the killed worker; within the heartbeat timeout it is retried.
      const requests = await hook.waitForRequests(2, 60_000);
      expect(requests[1]!.headers['x-webhook-id']).toBe(inFlight!.headers['x-webhook-id']);
      expect(requests[1]!.headers['x-webhook-retry']).toBe('0');
      expect(verifiedAsReceiver(endpoint.secret, requests[1]!)).toBe(true);

      const delivery = await waitForDeliveryStatus(stack, subscriber.key, String(inFlight!.headers['x-webhook-id']), ['delivered'], 30_000);
      expect(delivery.attempts).toEqual([expect.objectContaining({ attempt_number: 0, outcome: 'succeeded', status_code: 200 })]);
      expect(await deliveryIdsOf(stack, endpoint.id)).toEqual([delivery.id]);
    } finally {
      await stopProcess(first, 'SIGKILL');
      if (second) await stopProcess(second);
      await stack.close();
    }
  }, 300_000);

  it('the API killed right after committing a change: the event is delivered once a dispatcher runs', async () => {
    const endpoint = await setUp({ worker: false, dispatcher: false });

    const api = spawnEntryPoint('api/main.ts', { ...processEnv(stack), PORT: '0', HOST: '127.0.0.1' });
    try {
      const port = await waitFor(async () => /"port":(\d+)/.exec(api.output())?.[1], 60_000, 'the API to listen');
      const sent = await sendInbound(`http://127.0.0.1:${port}`, sender, employee());
      expect(sent.status).toBe(200);
      await stopProcess(api, 'SIGKILL');

      const [event] = await stack.em().execute<{ dispatched_at: Date | null }[]>('select dispatched_at from outbox_events where id = ?', [sent.body.event_id]);
      expect(event).toEqual({ dispatched_at: null });
      expect(await deliveryIdsOf(stack, endpoint.id)).toEqual([]);

      const logger = createLogger('silent');
      const worker = await startWorker({ config: stack.config, orm: stack.orm, logger, workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH, webhookCa: testCertificate().cert });
      const dispatcher = new OutboxDispatcher({ ...dispatcherOptions(stack), logger });
      await dispatcher.start();
      try {
        const [received] = await hook.waitForRequests(1, 30_000);
        expect(JSON.parse(received!.body).event_id).toBe(sent.body.event_id);
        expect(await deliveryIdsOf(stack, endpoint.id)).toEqual([deliveryIdFor(sent.body.event_id, endpoint.id)]);
      } finally {
        await dispatcher.stop();
        await worker.close();
      }
    } finally {
      await stopProcess(api, 'SIGKILL');
      await stack.close();
    }
  }, 120_000);

  it('a dispatcher that died after starting a workflow but before committing: the next one delivers once', async () => {
    const endpoint = await setUp({ worker: true, dispatcher: false });
    const sent = await sendInbound(stack.baseUrl, sender, employee());

    // What the dead dispatcher left behind: the workflow of the delivery it was making, and no row.
    const deliveryId = deliveryIdFor(sent.body.event_id, endpoint.id);
    const started = await temporalDeliveryWorkflows(stack.temporal, stack.config.temporal.taskQueues).start({
      input: { deliveryId, companyId: sender.companyId, endpointId: endpoint.id, eventType: 'employee.created' },
      endpointUrl: endpoint.url,
      eventId: sent.body.event_id,
      trace: null,
    });
    expect(started).toBe(true);

    const dispatcher = new OutboxDispatcher(dispatcherOptions(stack));
    try {
      expect(await dispatcher.dispatchBatch()).toBe(1);
      const [received] = await hook.waitForRequests(1, 30_000);
      expect(received!.headers['x-webhook-id']).toBe(deliveryId);
      await waitForDeliveryStatus(stack, subscriber.key, deliveryId, ['delivered']);
      expect(await dispatcher.dispatchBatch()).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(hook.requests).toHaveLength(1);
      const runs: string[] = [];
      for await (const run of stack.temporal.workflow.list({ query: `WorkflowId = "webhook-delivery/${deliveryId}"` })) runs.push(run.runId);
      expect(runs).toHaveLength(1);
    } finally {
      await dispatcher.stop();
      await stack.close();
    }
  }, 60_000);

  it('two dispatchers racing over the same events make each delivery once', async () => {
    const endpoint = await setUp({ worker: true, dispatcher: false });
    for (let i = 0; i < 20; i++) await sendInbound(stack.baseUrl, sender, employee());

    const dispatchers = [new OutboxDispatcher(dispatcherOptions(stack)), new OutboxDispatcher(dispatcherOptions(stack))];
    try {
      await Promise.all(dispatchers.map((d) => d.start()));
      const requests = await hook.waitForRequests(20, 30_000);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(hook.requests).toHaveLength(20);
      expect(new Set(requests.map((r) => r.headers['x-webhook-id'])).size).toBe(20);
      expect(await deliveryIdsOf(stack, endpoint.id)).toHaveLength(20);
    } finally {
      await Promise.all(dispatchers.map((d) => d.stop()));
      await stack.close();
    }
  }, 60_000);
});
