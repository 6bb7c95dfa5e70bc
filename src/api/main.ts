import { exitOnUnsupportedNode } from '../runtime-version';
import { loadConfig } from '../config';
import { createLogger } from '../logger';
import { startTracingFromEnv } from '../observability/tracing';
import { onShutdownSignal } from '../shutdown';

exitOnUnsupportedNode();

/** `npm run start:api`: the HTTP API alone, configured by the environment (see README). */
async function main() {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  // Before the code that loads node:http and pg: the SDK instruments them as they are required.
  const tracing = await startTracingFromEnv('construction-integration-api');
  const [{ connectOrm }, { connectTemporalClient }, { startApi }] = await Promise.all([import('../database.js'), import('../temporal/connection.js'), import('./server.js')]);
  const orm = await connectOrm(config.databaseUrl, config.dbPoolMax);
  const temporal = await connectTemporalClient(config.temporal);
  const api = await startApi({ config, orm, temporal, logger });
  logger.info({ port: api.port, tracing: tracing !== null }, 'API listening');
  onShutdownSignal(logger, [() => api.close(), () => temporal.connection.close(), () => orm.close(), async () => tracing?.stop()]);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
