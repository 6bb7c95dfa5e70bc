import { exitOnUnsupportedNode } from '../runtime-version';
import { loadConfig } from '../config';
import { createLogger } from '../logger';
import { startTracingFromEnv } from '../observability/tracing';
import { onShutdownSignal } from '../shutdown';

exitOnUnsupportedNode();

/**
 * `npm run start:worker`: the Temporal worker of the task queues WORKER_TASK_QUEUES names and the outbox dispatcher
 * (which starts delivery workflows), configured by the environment (see README), and the retention schedule. Run as
 * many as needed, of one queue or both; they share the work.
 */
async function main() {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  // Before the code that loads node:http and pg: the SDK instruments them as they are required.
  const tracing = await startTracingFromEnv('construction-integration-worker');
  const [{ connectOrm }, { startOutboxDispatcher }, { startFeedLagWatch }, { connectTemporalClient }, { ensureRetentionSchedule }, { installTemporalRuntime }, { startWorker }] =
    await Promise.all([
      import('../database.js'),
      import('../delivery/outbox/dispatcher.js'),
      import('../delivery/feeds/feed-alerts.js'),
      import('../temporal/connection.js'),
      import('../temporal/retention-schedule.js'),
      import('../temporal/runtime.js'),
      import('./worker.js'),
    ]);
  installTemporalRuntime(config.logLevel);
  const orm = await connectOrm(config.databaseUrl, config.dbPoolMax);
  const worker = await startWorker({ config, orm, logger, workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH });
  const temporal = await connectTemporalClient(config.temporal);
  // On the worker's connection: its starts hand their first workflow task to this process's worker (eager start).
  const dispatcher = await startOutboxDispatcher({ config, orm, deliveryWorkflows: worker.deliveryWorkflows, logger, metrics: worker.metrics });
  const feedLag = startFeedLagWatch({ orm, logger, lagAlertMs: config.webhooks.feedLagAlertMs });
  await ensureRetentionSchedule(temporal, config);
  logger.info({ taskQueues: [...worker.workers.keys()], metricsPort: worker.metricsPort, tracing: tracing !== null }, 'worker running');
  onShutdownSignal(logger, [async () => feedLag.stop(), () => dispatcher.stop(), () => worker.close(), () => temporal.connection.close(), () => orm.close(), async () => tracing?.stop()]);
  await worker.finished;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
