import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import type { Config } from '../config';
import { SecretBox } from '../crypto/secret-box';
import type { Orm } from '../db/orm';
import type { Logger } from '../logger';
import { createWorkerMetrics, serveMetrics } from '../metrics';
import { connectTemporalClient } from '../temporal/connection';
import { temporalDeliveryWorkflows } from '../temporal/temporal-delivery-workflows';
import { createWebhookSender } from '../delivery/webhook-sender';

export interface RunningWorker {
  worker: Worker;
  /** Settles when the worker has stopped. */
  finished: Promise<void>;
  /** Where GET /metrics is served. */
  metricsPort: number;
  close(): Promise<void>;
}

export interface WorkerOptions {
  config: Config;
  orm: Orm;
  logger: Logger;
  /** A prebuilt workflow bundle (tests build one once); otherwise workflows/ is bundled at start. */
  workflowBundlePath?: string;
  /** Extra trusted root for subscriber endpoints (tests' self-signed receivers); production uses NODE_EXTRA_CA_CERTS. */
  webhookCa?: string;
}

export async function startWorker({ config, orm, logger, workflowBundlePath, webhookCa }: WorkerOptions): Promise<RunningWorker> {
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
  const client = await connectTemporalClient(config.temporal);
  const metrics = createWorkerMetrics(orm);
  const metricsServer = await serveMetrics(metrics.registry, config.workerMetricsPort, config.host);
  const worker = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    activities: createActivities({
      orm,
      logger,
      secretBox: new SecretBox(config.encryptionKey),
      sender,
      webhooks: config.webhooks,
      metrics,
      deliveryWorkflows: temporalDeliveryWorkflows(client, config.temporal.taskQueue),
      publicBaseUrl: config.publicBaseUrl,
    }),
    ...(workflowBundlePath
      ? { workflowBundle: { codePath: workflowBundlePath } }
      : { workflowsPath: require.resolve('../../workflows') }),
    shutdownGraceTime: '10 seconds',
    maxCachedWorkflows: config.workerMaxCachedWorkflows,
  });
  const finished = worker.run().finally(async () => {
    sender.close();
    await metricsServer.close();
    await client.connection.close();
    await connection.close();
  });
  return {
    worker,
    finished,
    metricsPort: metricsServer.port,
    async close() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await finished;
    },
  };
}
