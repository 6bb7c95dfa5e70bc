import { exitOnUnsupportedNode } from '../runtime-version';
import { loadConfig } from '../config';
import { connectOrm } from '../db/orm';
import { createLogger } from '../logger';
import { startOutboxDispatcher } from '../delivery/outbox-dispatcher';
import { onShutdownSignal } from '../shutdown';
import { connectTemporalClient } from '../temporal/connection';
import { temporalDeliveryWorkflows } from '../temporal/temporal-delivery-workflows';
import { ensureRetentionSchedule } from '../temporal/retention-schedule';
import { installTemporalRuntime } from '../temporal/runtime';
import { startWorker } from './worker';

exitOnUnsupportedNode();

/**
 * `npm run start:worker`: the Temporal worker of the task queues WORKER_TASK_QUEUES names and the outbox dispatcher
 * (which starts delivery workflows), configured by the environment (see README), and the retention schedule. Run as
 * many as needed, of one queue or both; they share the work.
 */
async function main() {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  installTemporalRuntime(config.logLevel);
  const orm = await connectOrm(config.databaseUrl, config.dbPoolMax);
  const worker = await startWorker({ config, orm, logger, workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH });
  const temporal = await connectTemporalClient(config.temporal);
  const dispatcher = await startOutboxDispatcher({ config, orm, deliveryWorkflows: temporalDeliveryWorkflows(temporal, config.temporal.taskQueues), logger });
  await ensureRetentionSchedule(temporal, config);
  logger.info({ taskQueues: [...worker.workers.keys()], metricsPort: worker.metricsPort }, 'worker running');
  onShutdownSignal(logger, [() => dispatcher.stop(), () => worker.close(), () => temporal.connection.close(), () => orm.close()]);
  await worker.finished;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
