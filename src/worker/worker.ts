import { NativeConnection, type Worker, type WorkerOptions as TemporalWorkerOptions, type WorkflowBundleOption } from '@temporalio/worker';
import type { Client } from '@temporalio/client';
import type { SerializableSpan } from '@temporalio/interceptors-opentelemetry';
import type { WorkflowInfo } from '@temporalio/workflow';
import { setTimeout as delay } from 'node:timers/promises';
import { createActivities } from '../../activities';
import type { Config, WorkerSlots } from '../config';
import { SecretBox } from '../crypto/secret-box';
import type { Orm } from '../db/orm';
import type { Logger } from '../logger';
import { createWorkerMetrics, serveMetrics, type WorkerMetrics } from '../metrics';
import { activeTracing, type RunningTracing } from '../observability/tracing';
import { temporalClientOn } from '../temporal/connection';
import type { DeliveryWorkflows } from '../delivery/delivery-workflows';
import { moveSchedulesOff, openRunsOn } from '../temporal/drain-task-queue';
import { COMPANY_ID } from '../../workflows/search-attributes';
import { temporalDeliveryWorkflows } from '../temporal/temporal-delivery-workflows';
import { DeliveryAttempts } from '../delivery/attempts/attempt';
import { wakeHeld } from '../delivery/endpoints/endpoint-admission';
import { releaseWaiting } from '../delivery/endpoints/endpoints-service';
import { createWebhookSender } from '../delivery/attempts/webhook-sender';
import { watchEventLoop } from './event-loop-watch';
import { workersRunningWorkflowsInProcess } from './in-process-workflows';
import { bundleWorkflowsApart, type WorkflowSet } from './workflow-bundle';

export interface RunningWorker {
  /**
   * The Temporal Worker of each task queue this process serves, by queue name: the roles of WORKER_TASK_QUEUES, and
   * TEMPORAL_DRAIN_TASK_QUEUE's once runs were found open there (stopped when it has drained).
   */
  workers: ReadonlyMap<string, Worker>;
  /** Settles when every Worker has stopped; rejects when one failed (the others are stopped then). */
  finished: Promise<void>;
  /**
   * Settles when draining TEMPORAL_DRAIN_TASK_QUEUE has ended (nothing open there, or the worker stopping) and its
   * Worker, if one was needed, has stopped; at once when it is off.
   */
  drained: Promise<void>;
  /** Where GET /metrics is served. */
  metricsPort: number;
  /** What GET /metrics serves: this process's outbox dispatcher counts there too. */
  metrics: WorkerMetrics;
  /** A client on the Workers' connection: workflows it starts may have their first task handed straight to them. */
  client: Client;
  /** Delivery workflows started through `client`, eagerly: for this process's outbox dispatcher. */
  deliveryWorkflows: DeliveryWorkflows;
  close(): Promise<void>;
}

export interface WorkerOptions {
  config: Config;
  orm: Orm;
  logger: Logger;
  /**
   * A prebuilt bundle of every workflow (workflows/index.ts; tests build one once), which every Worker then loads;
   * otherwise each task queue's own workflows are bundled at start. With tracing on it must hold the tracing
   * interceptors (bundleWorkflows(true) of ./workflow-bundle).
   */
  workflowBundlePath?: string;
  /** Extra trusted root for subscriber endpoints (tests' self-signed receivers); production uses NODE_EXTRA_CA_CERTS. */
  webhookCa?: string;
  /** How often the drain queue is looked at for open runs (tests wait less than a minute). */
  drainCheckIntervalMs?: number;
}

const DRAIN_CHECK_INTERVAL_MS = 60_000;

/**
 * Tracing's part of a Worker: each activity a span in its run's trace (from the headers the run passes on), and the
 * sink through which the spans the bundled interceptors make inside workflow runs reach the SDK's exporter.
 */
async function tracingOptions(tracing: RunningTracing): Promise<Pick<TemporalWorkerOptions, 'interceptors' | 'sinks'>> {
  const otel = await import('@temporalio/interceptors-opentelemetry');
  const exporter = otel.makeWorkflowExporter(tracing.spanProcessor, tracing.resource);
  return {
    interceptors: {
      activity: [(ctx) => ({ inbound: new otel.OpenTelemetryActivityInboundInterceptor(ctx), outbound: new otel.OpenTelemetryActivityOutboundInterceptor(ctx) })],
    },
    sinks: { exporter: { export: { fn: (info: WorkflowInfo, spans: SerializableSpan[]) => exporter.export.fn(runAttributes(info), spans) } } },
  };
}

/**
 * What a workflow span says of its run: which run, and the company it works for. The sink adds the WorkflowInfo it is
 * given to every span as attributes, and the whole of it would bring the run's memo and a retried run's last failure
 * and result, which may quote a subscriber's response.
 */
function runAttributes(info: WorkflowInfo): WorkflowInfo {
  // The typed search attributes lose their methods on the way out of the workflow sandbox; the plain ones do not.
  const companyId = info.searchAttributes[COMPANY_ID.name]?.[0];
  const attributes = { workflowId: info.workflowId, runId: info.runId, workflowType: info.workflowType, taskQueue: info.taskQueue, attempt: info.attempt };
  // Only attributes, merged into each span's, are read of it.
  return (typeof companyId === 'string' ? { ...attributes, 'company.id': companyId } : attributes) as unknown as WorkflowInfo;
}

/**
 * One Temporal Worker per task queue, each with its own slot budget, in one process: a backlog of hanging delivery
 * attempts holds only the deliveries queue's activity slots, never the operations queue's. Every Worker registers
 * every activity, and loads its queue's workflows (the drain queue's Worker all of them); an activity runs on its
 * workflow's queue, so the budgets stay apart. Their workflow tasks share one thread, where each queue's workflow task
 * slots bound what waits.
 */
export async function startWorker({ config, orm, logger, workflowBundlePath, webhookCa, drainCheckIntervalMs = DRAIN_CHECK_INTERVAL_MS }: WorkerOptions): Promise<RunningWorker> {
  const sender = createWebhookSender({
    allowLoopback: config.webhooks.allowLoopback,
    timeoutMs: config.webhooks.timeoutMs,
    connectTimeoutMs: config.webhooks.connectTimeoutMs,
    ca: webhookCa,
  });
  const connection = await NativeConnection.connect({
    address: config.temporal.address,
    ...(config.temporal.apiKey ? { apiKey: config.temporal.apiKey, tls: true } : {}),
  });
  // On the Worker's own connection: the dispatcher's starts of this process can then ask for their first workflow task
  // in the start's answer (eager start), skipping the trip through the task queue.
  const client = await temporalClientOn(connection, config.temporal.namespace);
  const metrics = createWorkerMetrics(orm);
  const metricsServer = await serveMetrics(metrics.registry, config.workerMetricsPort, config.host);
  const deliveryWorkflows = temporalDeliveryWorkflows(client, config.temporal.taskQueues, { eagerStart: true });
  const deliveryAttempts = new DeliveryAttempts({
    orm,
    secretBox: new SecretBox(config.encryptionKey),
    sender,
    webhooks: config.webhooks,
    logger,
    metrics,
    // After the change that frees them has committed; a failure leaves them to their own timers.
    wake: (endpointId, deliveryIds) =>
      wakeHeld(orm.em.fork(), deliveryWorkflows, endpointId, deliveryIds).catch((error: unknown) =>
        logger.warn({ err: error, deliveryIds }, 'could not wake held deliveries; they look again on their own'),
      ),
    releaseWaiting: (endpointId) =>
      releaseWaiting(orm.em.fork(), deliveryWorkflows, endpointId).catch((error: unknown) =>
        logger.warn({ err: error, endpointId }, "could not release a disabled endpoint's waiting deliveries; they fail at their next attempt"),
      ),
  });
  const activities = createActivities({ orm, logger, webhooks: config.webhooks, deliveryAttempts, deliveryWorkflows, publicBaseUrl: config.publicBaseUrl });
  const tracing = activeTracing();
  // Each queue's Workers load their own workflows: a run evaluates its bundle's modules afresh, so a delivery does not
  // pay for the operations' workflows (workflows/deliveries.ts).
  const bundleOf = async (workflows: WorkflowSet): Promise<WorkflowBundleOption> =>
    workflowBundlePath ? { codePath: workflowBundlePath } : bundleWorkflowsApart(tracing !== null, workflows);
  const bundles = new Map(await Promise.all(config.workerTaskQueues.map(async (role) => [role, await bundleOf(role)] as const)));
  const traced = tracing ? await tracingOptions(tracing) : {};
  // The Workers of this process run their workflows in its own thread (the drain queue's too), watched for a workflow
  // that never yields.
  const InProcessWorker = workersRunningWorkflowsInProcess();
  const stopWatching = watchEventLoop();
  const createWorker = (taskQueue: string, slots: WorkerSlots, workflowBundle: WorkflowBundleOption) =>
    InProcessWorker.create({
      ...traced,
      connection,
      namespace: config.temporal.namespace,
      taskQueue,
      activities,
      workflowBundle,
      shutdownGraceTime: '10 seconds',
      maxCachedWorkflows: config.workerMaxCachedWorkflows,
      maxConcurrentActivityTaskExecutions: slots.activities,
      maxConcurrentWorkflowTaskExecutions: slots.workflowTasks,
    });

  const workers = new Map<string, Worker>();
  for (const role of config.workerTaskQueues) {
    workers.set(config.temporal.taskQueues[role], await createWorker(config.temporal.taskQueues[role], config.workerSlots[role], bundles.get(role)!));
  }

  const stopDraining = new AbortController();
  const stopWorkers = () => {
    stopDraining.abort();
    for (const worker of workers.values()) if (worker.getState() === 'RUNNING') worker.shutdown();
  };
  // One Worker failing stops the others: the process exits and is started again whole.
  const run = (worker: Worker) =>
    worker.run().catch((error: unknown) => {
      stopWorkers();
      throw error;
    });
  const runs = [...workers.values()].map(run);
  const drainQueue = config.temporal.drainTaskQueue;
  let drained: Promise<void> = Promise.resolve();
  if (drainQueue) {
    const draining = drainOldQueue({
      client,
      config,
      logger,
      drainQueue,
      intervalMs: drainCheckIntervalMs,
      signal: stopDraining.signal,
      startDrainWorker: async () => {
        // An older version's queue may hold runs of every workflow.
        const worker = await createWorker(drainQueue, config.workerSlots.drain, await bundleOf('all'));
        workers.set(drainQueue, worker);
        const running = run(worker);
        if (stopDraining.signal.aborted && worker.getState() === 'RUNNING') worker.shutdown();
        return { worker, running };
      },
    });
    // Its failure is the drain Worker's, which `finished` reports.
    drained = draining.catch(() => undefined);
    runs.push(draining);
  }
  const finished = Promise.allSettled(runs)
    .then((results) => {
      const failed = results.find((result) => result.status === 'rejected');
      if (failed) throw failed.reason;
    })
    .finally(async () => {
      // Attempts handed off by a run's first task finish and are recorded before the connections close.
      await deliveryAttempts.settled();
      await stopWatching();
      sender.close();
      await metricsServer.close();
      await connection.close();
    });
  return {
    workers,
    finished,
    drained,
    metricsPort: metricsServer.port,
    metrics,
    client,
    deliveryWorkflows,
    async close() {
      stopWorkers();
      await finished;
    },
  };
}

/**
 * Serves the task queue of an older version until nothing is left there. First its schedules move to the current
 * queues (until then runs may still start there); then every `intervalMs` it counts the runs open there: while there
 * are some, a Worker of the drain budget serves the queue (started at the first count that finds any, so a worker with
 * nothing to drain runs none); once there are none, that Worker stops. Problems are logged and tried again at the next
 * look. Settles when draining has ended (drained, or the worker stopping) and the drain Worker, if any, has stopped.
 */
async function drainOldQueue({
  client,
  config,
  logger,
  drainQueue,
  intervalMs,
  signal,
  startDrainWorker,
}: {
  client: Client;
  config: Config;
  logger: Logger;
  drainQueue: string;
  intervalMs: number;
  signal: AbortSignal;
  startDrainWorker: () => Promise<{ worker: Worker; running: Promise<void> }>;
}): Promise<void> {
  let schedulesMoved = false;
  let lastOpen: number | null = null;
  let drainer: { worker: Worker; running: Promise<void> } | undefined;
  while (!signal.aborted) {
    try {
      if (!schedulesMoved) {
        const moved = await moveSchedulesOff(client, drainQueue, config.temporal.taskQueues, logger);
        schedulesMoved = true;
        if (moved > 0) logger.info({ drainQueue, moved }, 'schedules moved off the old task queue');
      }
      const open = await openRunsOn(client, drainQueue);
      if (open === 0) {
        logger.info({ drainQueue }, 'old task queue drained: no run is open there');
        if (drainer?.worker.getState() === 'RUNNING') drainer.worker.shutdown();
        break;
      }
      if (open !== lastOpen) logger.info({ drainQueue, open }, 'draining the old task queue');
      lastOpen = open;
      drainer ??= await startDrainWorker();
    } catch (error) {
      if (!signal.aborted) logger.warn({ err: error, drainQueue }, 'could not look at the old task queue; trying again');
    }
    await delay(intervalMs, undefined, { signal }).catch(() => undefined);
  }
  await drainer?.running;
}
