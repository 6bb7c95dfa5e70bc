import { exitOnUnsupportedNode } from './runtime-version';
import { startApi } from './api/server';
import { loadConfig } from './config';
import { startOutboxDispatcher } from './events/outbox-dispatcher';
import { startEmbeddedPostgres } from './db/embedded-postgres';
import { connectOrm, migrate } from './db/orm';
import {
  LOCAL_DATA_DIR,
  LOCAL_DATABASE,
  LOCAL_POSTGRES_PORT,
  LOCAL_TEMPORAL_PORT,
  LOCAL_TEMPORAL_UI_PORT,
  localEncryptionKey,
} from './local-environment';
import { createLogger } from './logger';
import { onShutdownSignal } from './shutdown';
import { connectTemporalClient } from './temporal/connection';
import { startTemporalDevServer } from './temporal/dev-server';
import { ensureRetentionSchedule } from './temporal/retention-schedule';
import { installTemporalRuntime } from './temporal/runtime';
import { startWorker } from './worker/worker';

exitOnUnsupportedNode();

/**
 * `npm start`: the whole service in one process. Uses DATABASE_URL and TEMPORAL_ADDRESS when set; otherwise
 * starts an embedded PostgreSQL and the Temporal dev server with their data under .data/. Applies migrations,
 * then runs the worker and the API until SIGINT/SIGTERM, and stops everything it started.
 */
async function main() {
  const logger = createLogger(process.env.LOG_LEVEL ?? 'info');
  installTemporalRuntime(process.env.LOG_LEVEL ?? 'info');
  const env = { ...process.env };
  const stops: (() => Promise<unknown>)[] = [];
  let clusterDir = `${LOCAL_DATA_DIR}/postgres`;
  // Stops what was started, last first: API, then worker, then Temporal and PostgreSQL.
  const shutdown = async () => {
    for (const stop of stops.reverse()) await stop().catch((error: unknown) => logger.error({ err: error }, 'stop failed'));
  };
  try {
    env.ENCRYPTION_KEY ||= localEncryptionKey();
    if (!env.DATABASE_URL) {
      logger.info({ dataDir: LOCAL_DATA_DIR, port: LOCAL_POSTGRES_PORT }, 'starting embedded PostgreSQL');
      const db = await startEmbeddedPostgres({ dataDir: LOCAL_DATA_DIR, port: LOCAL_POSTGRES_PORT, database: LOCAL_DATABASE });
      stops.push(db.stop);
      env.DATABASE_URL = db.url;
      clusterDir = db.clusterDir;
    }
    if (!env.TEMPORAL_ADDRESS) {
      logger.info({ port: LOCAL_TEMPORAL_PORT }, 'starting Temporal dev server');
      const temporalServer = await startTemporalDevServer({
        dbFilename: `${LOCAL_DATA_DIR}/temporal.db`,
        port: LOCAL_TEMPORAL_PORT,
        uiPort: LOCAL_TEMPORAL_UI_PORT,
        namespace: env.TEMPORAL_NAMESPACE || 'default',
        log: (message) => logger.info(message),
      });
      stops.push(temporalServer.stop);
      env.TEMPORAL_ADDRESS = temporalServer.address;
      env.TEMPORAL_UI_URL = temporalServer.uiUrl ?? undefined;
    }
    const config = loadConfig(env);
    const orm = await connectOrm(config.databaseUrl, config.dbPoolMax);
    stops.push(() => orm.close());
    const applied = await migrate(orm);
    if (applied.length) logger.info({ applied }, 'migrations applied');

    const worker = await startWorker({ config, orm, logger });
    stops.push(() => worker.close());
    const temporal = await connectTemporalClient(config.temporal);
    stops.push(() => temporal.connection.close());
    const dispatcher = await startOutboxDispatcher({ config, orm, temporal, logger });
    stops.push(() => dispatcher.stop());
    await ensureRetentionSchedule(temporal, config);
    const api = await startApi({ config, orm, temporal, logger });
    stops.push(() => api.close());

    const base = config.publicBaseUrl;
    console.log(`
Construction integration service is running.
  REST API         ${base}/api/v1
  Inbound webhooks ${base}/webhooks/inbound
  Health           ${base}/health
  API reference    ${base}/docs (OpenAPI: ${base}/api/v1/openapi.json)
  Temporal UI      ${env.TEMPORAL_UI_URL ?? `(your Temporal server at ${config.temporal.address})`}
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
