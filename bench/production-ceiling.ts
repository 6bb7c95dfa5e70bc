import { Client as TemporalClient, Connection } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Pool } from 'pg';
import { parseEncryptionKey } from '../src/config';
import { connectOrm } from '../src/database';
import { startReceiver, testCertificate, type TestReceiver } from '../test/helpers/https-receiver';
import { freePort } from '../test/helpers/ports';
import { probeDeliveriesOf, sustainedDeliveryRate, type SustainedDeliveries } from './deliveries';
import { seedTenant } from './seed';
import { devServerCpu } from './proc';
import { type CompiledProject, type NodeProcess, phaseEnv, type Servers, startNode, waitForHttp, waitForOutput } from './stack';
import { startPostgresTemporal } from './temporal-server';

/**
 * Issue 27's production ceiling (phase 6e): phase 6's measurement (the no-op workflow ceiling, then deliveries until
 * their latency bends) on the Temporal dev server and on the same server version run on its own with PostgreSQL
 * persistence (bench/temporal-server.ts), in one run. On each, the service's worker (and an api, to register the
 * endpoint), and the no-op worker of the ceiling, as processes of their own pointed at that server; the service's
 * database is the run's for both. Phase 6's figures stand for the dev server's when the run measured them.
 */
export interface ProductionCeilingSettings {
  ceilingSeconds: number;
  stepSeconds: number;
  /** The folder of temporal-server, temporal-sql-tool and the schema (installTemporalServer). */
  serverDir: string;
  /** Phase 6's figures on the dev server, when this run measured them: not measured again. */
  devServer: SustainedDeliveries | null;
  /** More to measure on the Temporal server with PostgreSQL while it runs (phase 12's delivery cost). */
  alsoOnPostgres?: (temporal: { address: string; cpuSeconds: () => Record<string, number> }) => Promise<void>;
}

export interface ProductionCeilingResult {
  devServer: SustainedDeliveries & { measuredHere: boolean };
  postgres: SustainedDeliveries & { startSeconds: number; postgresSettings: string[] };
}

/** Phase 6's measurement with the service's worker and the no-op worker pointed at `temporalAddress`. */
export async function measureOn(
  name: string,
  temporalAddress: string,
  cpuSeconds: () => Record<string, number>,
  servers: Servers,
  compiled: CompiledProject,
  logDir: string,
  settings: Pick<ProductionCeilingSettings, 'ceilingSeconds' | 'stepSeconds'>,
): Promise<SustainedDeliveries> {
  const env = { ...phaseEnv(servers, name), TEMPORAL_ADDRESS: temporalAddress };
  const noopQueue = `bench-noop-${randomUUID()}`;
  const processes: NodeProcess[] = [];
  const orm = await connectOrm(servers.databaseUrl, 4);
  const db = new Pool({ connectionString: servers.databaseUrl, max: 4 });
  let receiver: TestReceiver | null = null;
  let temporal: TemporalClient | null = null;
  try {
    // As in phase 6: the worker with its npm script's flags, an api, the no-op worker.
    const worker = startNode(
      `${name}-worker`,
      compiled.entry('src/worker/main.ts'),
      { ...env, WEBHOOK_ALLOW_LOOPBACK: 'true', NODE_EXTRA_CA_CERTS: testCertificate().certFile, WORKER_METRICS_PORT: '0' },
      { logDir, as: 'start:worker' },
    );
    processes.push(worker);
    const apiPort = await freePort();
    const api = startNode(`${name}-api`, compiled.entry('src/api/main.ts'), { ...env, PORT: String(apiPort), HOST: '127.0.0.1', WEBHOOK_ALLOW_LOOPBACK: 'true' }, { logDir, as: 'start:api' });
    processes.push(api);
    const noopWorker = startNode(`${name}-noop-worker`, compiled.entry('bench/noop-worker.ts'), { ...env, NOOP_TASK_QUEUE: noopQueue }, { logDir });
    processes.push(noopWorker);
    const tenant = await seedTenant(orm, parseEncryptionKey(env.ENCRYPTION_KEY), `Production ceiling ${name}`, { keys: 1, projects: 0 });
    await Promise.all([waitForHttp(`http://127.0.0.1:${apiPort}/health`, api), waitForOutput(worker, 'worker running'), waitForOutput(noopWorker, 'noop worker running')]);

    receiver = await startReceiver();
    const { probe } = await probeDeliveriesOf(db, `http://127.0.0.1:${apiPort}`, tenant, receiver);
    temporal = new TemporalClient({ connection: await Connection.connect({ address: temporalAddress }) });
    const measured = await sustainedDeliveryRate(temporal, noopQueue, probe, { ceilingSeconds: settings.ceilingSeconds, stepSeconds: settings.stepSeconds, cpuSeconds });
    const tally = probe.tally();
    if (tally.lost > 0) measured.steps.push(`${tally.lost} of ${tally.sent} not received`);
    console.log(
      `6e, ${name}: no-op ceiling ${measured.ceiling.toFixed(1)}/s, deliveries sustained ${measured.sustained.toFixed(1)}/s (${measured.steps.join('; ')}); ` +
        `CPU per no-op workflow: ${Object.entries(measured.cpuMsPerWorkflow).map(([part, ms]) => `${part} ${ms.toFixed(1)} ms`).join(', ') || 'not measured'}, ` +
        `machine ${measured.machineCores.toFixed(2)} cores busy meanwhile.`,
    );
    return measured;
  } finally {
    await temporal?.connection.close();
    await receiver?.close();
    await db.end();
    await orm.close();
    for (const proc of processes.reverse()) await proc.stop();
  }
}

export async function productionCeilingPhase(servers: Servers, compiled: CompiledProject, logDir: string, settings: ProductionCeilingSettings): Promise<ProductionCeilingResult> {
  const devServer = settings.devServer
    ? { ...settings.devServer, measuredHere: false }
    : { ...(await measureOn('dev-server', servers.temporalAddress, devServerCpu, servers, compiled, logDir, settings)), measuredHere: true };
  const started = Date.now();
  const temporal = await startPostgresTemporal(path.join(logDir, 'temporal-postgres'), settings.serverDir);
  try {
    console.log(`6e: Temporal server on PostgreSQL ready in ${((Date.now() - started) / 1000).toFixed(1)} s (${temporal.address}).`);
    const postgres = await measureOn('temporal-postgres', temporal.address, () => temporal.cpuSeconds(), servers, compiled, logDir, settings);
    await settings.alsoOnPostgres?.({ address: temporal.address, cpuSeconds: () => temporal.cpuSeconds() });
    return { devServer, postgres: { ...postgres, startSeconds: temporal.startSeconds, postgresSettings: temporal.postgresSettings } };
  } finally {
    await temporal.stop();
  }
}
