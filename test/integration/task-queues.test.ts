import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { projectCreationWorkflowId } from '../../src/domain/work/project-creation';
import { createLogger } from '../../src/logger';
import { retentionScheduleIdOn } from '../../src/temporal/retention-schedule';
import { COMPANY_ID } from '../../workflows/search-attributes';
import { temporalWorkflows } from '../../src/temporal/temporal-workflows';
import { startWorker } from '../../src/worker/worker';
import { RETENTION, type RetentionInput } from '../../workflows/retention.contract';
import { SCHEDULED_REPORT } from '../../workflows/scheduled-report.contract';
import { deliveryWorkflowId } from '../../workflows/webhook-delivery.contract';
import { projectData } from '../helpers/fixtures';
import { startReceiver, testCertificate, type TestReceiver } from '../helpers/https-receiver';
import { spawnEntryPoint, stopProcess, workerStarted } from '../helpers/processes';
import { createTenant, envelope, processEnvOf, sendInbound, startStack, testConfig, type TestStack } from '../helpers/stack';
import { addApiKey, deliveryIdsOf, registerEndpoint } from '../helpers/webhooks';

const retentionInput: RetentionInput = { periods: { outboxDays: 30, rateLimitDays: 30, deliveryDays: 90 }, batchSize: 1000 };

/** A project created through the inbound endpoint runs its creation to the end (operations queue) and is delivered to `hook` (deliveries queue). */
async function runsBothQueues(stack: TestStack, hook: TestReceiver, projectCode: string): Promise<void> {
  const tenant = await createTenant(stack.orm, ['admin']);
  await registerEndpoint(stack, (await addApiKey(stack, tenant)).key, { url: hook.url, event_types: ['project.created'] });
  const created = await sendInbound(stack.baseUrl, tenant, envelope('project.created', projectData(projectCode)));
  expect(created.status).toBe(200);
  await expect(stack.temporal.workflow.getHandle(projectCreationWorkflowId(tenant.companyId, projectCode)).result()).resolves.toBeDefined();
  await hook.waitForRequests(1);
}

describe('task queues and fairness', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.close());

  it('runs a multi-step operation on the operations queue and a delivery on the deliveries queue, each with its company as fairness key', async () => {
    const tenant = await createTenant(stack.orm, ['admin']);
    const hook = await startReceiver();
    try {
      const endpoint = await registerEndpoint(stack, (await addApiKey(stack, tenant)).key, { url: hook.url, event_types: ['project.created'] });
      const created = await sendInbound(stack.baseUrl, tenant, envelope('project.created', projectData('Q-1')));
      expect(created.status).toBe(200);
      const operation = await stack.temporal.workflow.getHandle(projectCreationWorkflowId(tenant.companyId, 'Q-1')).describe();
      expect(operation).toMatchObject({ taskQueue: stack.config.temporal.taskQueues.operations, priority: { fairnessKey: tenant.companyId } });

      await hook.waitForRequests(1);
      const [deliveryId] = await deliveryIdsOf(stack, endpoint.id);
      const delivery = await stack.temporal.workflow.getHandle(deliveryWorkflowId(deliveryId!)).describe();
      expect(delivery).toMatchObject({ taskQueue: stack.config.temporal.taskQueues.deliveries, priority: { fairnessKey: tenant.companyId } });
    } finally {
      await hook.close();
    }
  });

  it("makes a schedule's runs start on their workflow's queue with the company as fairness key", async () => {
    const scheduleId = `report-schedule/${randomUUID()}`;
    const companyId = randomUUID();
    await temporalWorkflows(stack.temporal, stack.config.temporal.taskQueues).schedules.create({
      scheduleId,
      cron: '0 0 1 1 *',
      timezone: 'UTC',
      run: { workflow: SCHEDULED_REPORT, workflowId: `scheduled-report/${randomUUID()}`, input: { companyId, scheduleId: randomUUID() }, labels: { companyId, eventType: 'report.scheduled', recordKey: 'r' }, summary: 'test' },
      note: 'a test schedule',
    });
    try {
      const { action } = await stack.temporal.schedule.getHandle(scheduleId).describe();
      expect(action).toMatchObject({ taskQueue: stack.config.temporal.taskQueues.operations, priority: { fairnessKey: companyId } });
    } finally {
      await stack.temporal.schedule.getHandle(scheduleId).delete();
    }
  });
});

describe("the worker's threads", () => {
  /** Node's worker threads in this process, by the name Linux shows for them. */
  const workerThreads = () => readdirSync('/proc/self/task').filter((task) => readFileSync(`/proc/self/task/${task}/comm`, 'utf8').trim() === 'WorkerThread').length;

  it("runs the workflows of both task queues in the process's own thread (no workflow thread), with one thread watching its event loop, gone when the worker stops", async () => {
    const config = await testConfig();
    const stack = await startStack({ worker: false, dispatcher: true, config });
    const hook = await startReceiver();
    try {
      const before = workerThreads();
      const worker = await startWorker({
        config,
        orm: stack.orm,
        logger: createLogger('silent'),
        workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH,
        webhookCa: testCertificate().cert,
      });
      try {
        expect([...worker.workers.keys()]).toEqual([config.temporal.taskQueues.operations, config.temporal.taskQueues.deliveries]);
        expect(workerThreads()).toBe(before + 1);
        await runsBothQueues(stack, hook, 'T-1');
      } finally {
        await worker.close();
      }
      expect(workerThreads()).toBe(before);
    } finally {
      await hook.close();
      await stack.close();
    }
  }, 60_000);
});

describe("each task queue's workflow bundle", () => {
  it("is made at start when no prebuilt bundle is set, and runs its queue's workflows: a multi-step operation and a delivery", async () => {
    const stack = await startStack({ worker: false });
    const hook = await startReceiver();
    // WORKFLOW_BUNDLE_PATH empty: the worker bundles workflows/operations.ts and workflows/deliveries.ts itself.
    const worker = spawnEntryPoint('worker/main.ts', {
      ...processEnvOf(stack),
      WORKFLOW_BUNDLE_PATH: '',
      NODE_EXTRA_CA_CERTS: testCertificate().certFile,
      WEBHOOK_ALLOW_LOOPBACK: 'true',
    });
    try {
      await workerStarted(worker, 'bundling');
      await runsBothQueues(stack, hook, 'B-1');
    } finally {
      await stopProcess(worker);
      await hook.close();
      await stack.close();
    }
  }, 240_000);
});

describe('upgrading from one task queue', () => {
  /** A stack of its own whose worker drains `oldQueue`, looking at it every 300 ms. */
  async function drainingStack(oldQueue: string) {
    const config = await testConfig({ TEMPORAL_DRAIN_TASK_QUEUE: oldQueue });
    const stack = await startStack({ worker: false, config });
    const startDrainingWorker = () =>
      startWorker({ config, orm: stack.orm, logger: createLogger('silent'), workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH, drainCheckIntervalMs: 300 });
    return { config, stack, startDrainingWorker };
  }

  it('drains the old queue: runs open there finish, its schedules move to the current queues, and its Worker stops', async () => {
    const oldQueue = `test-old-${randomUUID()}`;
    const { config, stack, startDrainingWorker } = await drainingStack(oldQueue);
    const companyId = randomUUID();
    const reportScheduleId = `report-schedule/${randomUUID()}`;
    try {
      // What a worker of the previous version left: a run on its queue, a report schedule and its retention schedule.
      const leftOver = await stack.temporal.workflow.start(RETENTION.name, { taskQueue: oldQueue, workflowId: `retention-left-over/${randomUUID()}`, args: [retentionInput] });
      await stack.temporal.schedule.create({
        scheduleId: reportScheduleId,
        spec: { cronExpressions: ['0 0 1 1 *'] },
        action: { type: 'startWorkflow', workflowType: SCHEDULED_REPORT.name, taskQueue: oldQueue, args: [{}], typedSearchAttributes: [{ key: COMPANY_ID, value: companyId }] },
        state: { paused: true },
      });
      await stack.temporal.schedule.create({
        scheduleId: retentionScheduleIdOn(oldQueue),
        spec: { intervals: [{ every: '1 day' }] },
        action: { type: 'startWorkflow', workflowType: RETENTION.name, taskQueue: oldQueue, args: [retentionInput] },
        state: { paused: true },
      });

      const worker = await startDrainingWorker();
      try {
        await leftOver.result();
        await worker.drained;
        expect(worker.workers.get(oldQueue)!.getState()).toBe('STOPPED');
        const { action } = await stack.temporal.schedule.getHandle(reportScheduleId).describe();
        expect(action).toMatchObject({ taskQueue: config.temporal.taskQueues.operations, priority: { fairnessKey: companyId } });
        await expect(stack.temporal.schedule.getHandle(retentionScheduleIdOn(oldQueue)).describe()).rejects.toThrow(/not found/i);
        expect(worker.workers.get(config.temporal.taskQueues.operations)!.getState()).toBe('RUNNING');
        expect(worker.workers.get(config.temporal.taskQueues.deliveries)!.getState()).toBe('RUNNING');
      } finally {
        await worker.close();
      }
    } finally {
      await stack.temporal.schedule.getHandle(reportScheduleId).delete().catch(() => undefined);
      await stack.close();
    }
  }, 90_000);

  it('starts no Worker for an old queue with nothing open on it', async () => {
    const oldQueue = `test-old-${randomUUID()}`;
    const { config, stack, startDrainingWorker } = await drainingStack(oldQueue);
    try {
      const worker = await startDrainingWorker();
      try {
        await worker.drained;
        expect([...worker.workers.keys()]).toEqual([config.temporal.taskQueues.operations, config.temporal.taskQueues.deliveries]);
      } finally {
        await worker.close();
      }
    } finally {
      await stack.close();
    }
  }, 60_000);
});
