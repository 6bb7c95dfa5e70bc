import { exitOnUnsupportedNode } from '../runtime-version';
import { loadConfig } from '../config';
import { connectOrm } from '../db/orm';
import { createLogger } from '../logger';
import { onShutdownSignal } from '../shutdown';
import { connectTemporalClient } from '../temporal/connection';
import { startApi } from './server';

exitOnUnsupportedNode();

/** `npm run start:api`: the HTTP API alone, configured by the environment (see README). */
async function main() {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const orm = await connectOrm(config.databaseUrl, config.dbPoolMax);
  const temporal = await connectTemporalClient(config.temporal);
  const api = await startApi({ config, orm, temporal, logger });
  logger.info({ port: api.port }, 'API listening');
  onShutdownSignal(logger, [() => api.close(), () => temporal.connection.close(), () => orm.close()]);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
