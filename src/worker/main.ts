import { loadConfig } from '../config';
import { connectOrm } from '../db/orm';
import { createLogger } from '../logger';
import { onShutdownSignal } from '../shutdown';
import { installTemporalRuntime } from '../temporal/runtime';
import { startWorker } from './worker';

/** `npm run start:worker`: the Temporal worker alone, configured by the environment (see README). */
async function main() {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  installTemporalRuntime(config.logLevel);
  const orm = await connectOrm(config.databaseUrl, config.dbPoolMax);
  const worker = await startWorker({ config, orm, logger, workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH });
  logger.info({ taskQueue: config.temporal.taskQueue }, 'worker running');
  onShutdownSignal(logger, [() => worker.close(), () => orm.close()]);
  await worker.finished;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
