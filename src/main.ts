import { exitOnUnsupportedNode } from './runtime-version';
import { loadConfig } from './config';
import {
  LOCAL_DATA_DIR,
  LOCAL_DATABASE,
  LOCAL_POSTGRES_PORT,
  LOCAL_TEMPORAL_PORT,
  LOCAL_TEMPORAL_UI_PORT,
  localEncryptionKey,
} from './local-environment';
import { createLogger } from './logger';
import { startTracingFromEnv } from './observability/tracing';
import { onShutdownSignal } from './shutdown';

exitOnUnsupportedNode();

/** Settles every promise, then throws the first failure: what did start is known (and stopped) either way. */
async function allStarted(starting: Promise<unknown>[]): Promise<void> {
  const failed = (await Promise.allSettled(starting)).find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
}

/**
 * `npm start`: the whole service in one process. Uses DATABASE_URL and TEMPORAL_ADDRESS when set; otherwise
 * starts an embedded PostgreSQL and the Temporal dev server with their data under .data/. Applies migrations,
 * then runs the worker and the API until SIGINT/SIGTERM, and stops everything it started.
 *
 * Start-up overlaps what it can: PostgreSQL and the Temporal dev server start as processes of their own while
 * this one loads the rest of its code (imported below, when needed), and the API gets ready while the worker
 * bundles the workflow code.
 */
async function main() {
  const logger = createLogger(process.env.LOG_LEVEL ?? 'info');
  const env = { ...process.env };
  const stops: (() => Promise<unknown>)[] = [];
  let clusterDir = `${LOCAL_DATA_DIR}/postgres`;
  // Stops what was started, last first: API, then worker, then Temporal and PostgreSQL.
  const shutdown = async () => {
    for (const stop of stops.reverse()) await stop().catch((error: unknown) => logger.error({ err: error }, 'stop failed'));
  };
  try {
    // Before the code that loads node:http and pg: the SDK instruments them as they are required.
    const tracing = await startTracingFromEnv('construction-integration');
    if (tracing) stops.push(() => tracing.stop());
    env.ENCRYPTION_KEY ||= localEncryptionKey();
    const servers: Promise<void>[] = [];
    if (!env.DATABASE_URL) {
      logger.info({ dataDir: LOCAL_DATA_DIR, port: LOCAL_POSTGRES_PORT }, 'starting embedded PostgreSQL');
      const { startEmbeddedPostgres } = await import('./db/embedded-postgres.js');
      servers.push(
        startEmbeddedPostgres({ dataDir: LOCAL_DATA_DIR, port: LOCAL_POSTGRES_PORT, database: LOCAL_DATABASE }).then((db) => {
          stops.push(db.stop);
          env.DATABASE_URL = db.url;
          clusterDir = db.clusterDir;
        }),
      );
    }
    // The Temporal runtime is installed before any connection, the dev server's included.
    const { installTemporalRuntime } = await import('./temporal/runtime.js');
    installTemporalRuntime(process.env.LOG_LEVEL ?? 'info');
    if (!env.TEMPORAL_ADDRESS) {
      logger.info({ port: LOCAL_TEMPORAL_PORT }, 'starting Temporal dev server');
      servers.push(
        import('./temporal/dev-server.js')
          .then(({ startTemporalDevServer }) =>
            startTemporalDevServer({
              dbFilename: `${LOCAL_DATA_DIR}/temporal.db`,
              port: LOCAL_TEMPORAL_PORT,
              uiPort: LOCAL_TEMPORAL_UI_PORT,
              namespace: env.TEMPORAL_NAMESPACE || 'default',
              log: (message) => logger.info(message),
            }),
          )
          .then((temporalServer) => {
            stops.push(temporalServer.stop);
            env.TEMPORAL_ADDRESS = temporalServer.address;
            env.TEMPORAL_UI_URL = temporalServer.uiUrl ?? undefined;
          }),
      );
    }
    const code = Promise.all([
      import('./database.js'),
      import('./worker/worker.js'),
      import('./api/server.js'),
      import('./delivery/outbox/dispatcher.js'),
      import('./delivery/feeds/feed-alerts.js'),
      import('./temporal/connection.js'),
      import('./temporal/retention-schedule.js'),
    ]);
    await allStarted([...servers, code]);
    const [{ connectOrm, migrate }, { startWorker }, { startApi }, { startOutboxDispatcher }, { startFeedLagWatch }, { connectTemporalClient }, { ensureRetentionSchedule }] =
      await code;

    const config = loadConfig(env);
    const orm = await connectOrm(config.databaseUrl, config.dbPoolMax);
    stops.push(() => orm.close());
    const applied = await migrate(orm);
    if (applied.length) logger.info({ applied }, 'migrations applied');

    // Stopped in this order, whichever finished starting first.
    const started: Partial<Record<'worker' | 'client' | 'dispatcher' | 'api', () => Promise<unknown>>> = {};
    let workerMetricsPort: number | undefined;
    const worker = startWorker({ config, orm, logger }).then((w) => {
      started.worker = () => w.close();
      workerMetricsPort = w.metricsPort;
      return w;
    });
    const front = (async () => {
      const temporal = await connectTemporalClient(config.temporal);
      started.client = () => temporal.connection.close();
      const api = await startApi({ config, orm, temporal, logger });
      started.api = () => api.close();
      // On the worker's connection: its starts hand their first workflow task to the worker (eager start).
      const { deliveryWorkflows, metrics } = await worker;
      const dispatcher = await startOutboxDispatcher({ config, orm, deliveryWorkflows, logger, metrics });
      const feedLag = startFeedLagWatch({ orm, logger, lagAlertMs: config.webhooks.feedLagAlertMs });
      started.dispatcher = async () => {
        feedLag.stop();
        await dispatcher.stop();
      };
      await ensureRetentionSchedule(temporal, config);
    })();
    const running = allStarted([worker, front]);
    await running.finally(() => {
      for (const part of ['worker', 'client', 'dispatcher', 'api'] as const) if (started[part]) stops.push(started[part]);
    });

    const base = config.publicBaseUrl;
    console.log(`
Construction integration service is running.
  REST API         ${base}/api/v1
  Inbound webhooks ${base}/webhooks/inbound
  Health           ${base}/health
  Metrics          ${base}/metrics (worker: http://localhost:${workerMetricsPort}/metrics)
  API reference    ${base}/docs (OpenAPI: ${base}/api/v1/openapi.json)
  Console          ${base}/console (first admin: npm run cli -- user create)
  Temporal UI      ${env.TEMPORAL_UI_URL ?? `(your Temporal server at ${config.temporal.address})`}
  Task queues      ${config.workerTaskQueues.map((role) => `${config.temporal.taskQueues[role]} (${config.workerSlots[role].activities} activity slots)`).join(', ')}
  Data             ${process.env.DATABASE_URL ? 'DATABASE_URL' : `embedded PostgreSQL on port ${LOCAL_POSTGRES_PORT}, data in ${clusterDir}`}

Create a company and an API key (in another terminal):
  npm run cli -- company create "Acme Construction"
  npm run cli -- key create --company <company id> --name "ERP sync" --scopes admin

Ctrl+C stops everything.
`);
    onShutdownSignal(logger, [shutdown]);
  } catch (error) {
    await shutdown();
    throw error;
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
