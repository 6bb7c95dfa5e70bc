import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import type { Config } from '../config';
import type { Orm } from '../db/orm';
import type { Logger } from '../logger';

export interface RunningWorker {
  worker: Worker;
  /** Settles when the worker has stopped. */
  finished: Promise<void>;
  close(): Promise<void>;
}

export interface WorkerOptions {
  config: Config;
  orm: Orm;
  logger: Logger;
  /** A prebuilt workflow bundle (tests build one once); otherwise workflows/ is bundled at start. */
  workflowBundlePath?: string;
}

export async function startWorker({ config, orm, logger, workflowBundlePath }: WorkerOptions): Promise<RunningWorker> {
  const connection = await NativeConnection.connect({
    address: config.temporal.address,
    ...(config.temporal.apiKey ? { apiKey: config.temporal.apiKey, tls: true } : {}),
  });
  const worker = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    activities: createActivities({ orm, logger }),
    ...(workflowBundlePath
      ? { workflowBundle: { codePath: workflowBundlePath } }
      : { workflowsPath: require.resolve('../../workflows') }),
    shutdownGraceTime: '10 seconds',
  });
  const finished = worker.run().finally(() => connection.close());
  return {
    worker,
    finished,
    async close() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await finished;
    },
  };
}
