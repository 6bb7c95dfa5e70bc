import { Client as TemporalClient, Connection } from '@temporalio/client';
import { Pool } from 'pg';
import { parseEncryptionKey } from '../src/config';
import { connectOrm } from '../src/database';
import { startReceiver, testCertificate, type TestReceiver } from '../test/helpers/https-receiver';
import { freePort } from '../test/helpers/ports';
import { deliveryWorkflowId } from '../workflows/webhook-delivery.contract';
import { type DeliveryProbe, probeDeliveriesOf } from './deliveries';
import { seedTenant } from './seed';
import { threadCpuSeconds } from './proc';
import { type CompiledProject, type NodeProcess, phaseEnv, type Servers, startNode, waitForHttp, waitForOutput } from './stack';

/**
 * What one delivered event costs, its first attempt succeeding (issue 42): events committed at a steady rate well
 * below what the worker sustains, each delivered to one endpoint, and over that stretch the worker's CPU time, the
 * statements PostgreSQL ran for the service (pg_stat_statements: the dispatcher's and the worker's, transaction
 * control included, a PL/pgSQL function's call counted once), the CPU of the service's PostgreSQL and of the Temporal
 * server, each divided by the deliveries; and the history of one delivered run.
 */
export interface DeliveryCost {
  deliveries: number;
  offeredPerSecond: number;
  workerCpuMs: number;
  /** The worker's CPU ms per delivery by thread (bench/proc.ts threadCpuSeconds). */
  workerThreadsCpuMs: Record<string, number>;
  /** Null when the database has no pg_stat_statements (a DATABASE_URL server without it preloaded). */
  statements: number | null;
  /** The statements run most per delivery, with their calls per delivery. */
  topStatements: { calls: number; query: string }[];
  /** CPU ms per delivery of each part `serverCpu` names (the service's PostgreSQL, the Temporal server, its database). */
  serverCpuMs: Record<string, number>;
  /** Events of one delivered run's history, by type, in order. */
  history: string[];
  latency: { p50: number; p99: number; max: number };
  /** Deliveries received a second, from the first commit to the last receipt. */
  deliveredPerSecond: number;
}

export interface DeliveryCostSettings {
  perSecond: number;
  seconds: number;
  /** CPU seconds used so far by the servers' processes, by part. */
  serverCpu: () => Record<string, number>;
  /** Wraps the measured stretch (the CPU profile's window). */
  around?: <T>(work: () => Promise<T>) => Promise<T>;
}

/**
 * Marks a query of this measurement's own, so that pg_stat_statements' count leaves it out: the poll for the runs to
 * close was counted as the service's, 11.7 times per delivery in a run whose last runs closed late.
 */
const BENCH_QUERY = '/* bench */';

const STATEMENTS_OF_THE_SERVICE = `
  from pg_stat_statements s join pg_database d on d.oid = s.dbid
 where d.datname = current_database()
   -- The probe's own commits, and this measurement's queries (its poll marked BENCH_QUERY), are not the service's.
   and s.query not ilike 'insert into outbox_events%' and s.query not ilike '%pg_stat_statements%' and s.query not like '${BENCH_QUERY}%'`;

/** Whether pg_stat_statements can count this database's statements (made available when the server preloads it). */
async function statementsCounted(db: Pool): Promise<boolean> {
  try {
    await db.query('create extension if not exists pg_stat_statements');
    await db.query('select pg_stat_statements_reset()');
    return true;
  } catch {
    return false;
  }
}

export async function measureDeliveryCost(db: Pool, temporal: TemporalClient, worker: NodeProcess, probe: DeliveryProbe, settings: DeliveryCostSettings): Promise<DeliveryCost> {
  // Warmed up first: the first runs compile the worker's code paths and open its connections.
  await probe.run(settings.perSecond, 2);
  await waitForRunsToClose(db, 60_000);
  const counted = await statementsCounted(db);
  const before = { worker: worker.cpuSeconds(), threads: threadCpuSeconds(worker.child.pid!), servers: settings.serverCpu() };
  const around = settings.around ?? ((work) => work());
  const run = await around(async () => {
    const result = await probe.run(settings.perSecond, settings.seconds);
    // The run's last workflow tasks and records come after the last receipt.
    await waitForRunsToClose(db, 60_000);
    return result;
  });
  const workerCpu = worker.cpuSeconds() - before.worker;
  const threadsAfter = threadCpuSeconds(worker.child.pid!);
  const serversAfter = settings.serverCpu();
  const deliveries = Math.max(1, run.received);
  let statements: number | null = null;
  let topStatements: DeliveryCost['topStatements'] = [];
  if (counted) {
    const [total] = (await db.query<{ calls: string }>(`select coalesce(sum(s.calls), 0) as calls ${STATEMENTS_OF_THE_SERVICE}`)).rows;
    statements = Number(total!.calls) / deliveries;
    const top = await db.query<{ calls: string; query: string }>(`select s.calls, s.query ${STATEMENTS_OF_THE_SERVICE} order by s.calls desc limit 12`);
    topStatements = top.rows.map((row) => ({ calls: Number(row.calls) / deliveries, query: row.query.replace(/\s+/g, ' ').slice(0, 140) }));
  }
  const serverCpuMs = Object.fromEntries(Object.entries(serversAfter).map(([part, seconds]) => [part, (1000 * (seconds - (before.servers[part] ?? 0))) / deliveries]));
  return {
    deliveries: run.received,
    offeredPerSecond: settings.perSecond,
    workerCpuMs: (1000 * workerCpu) / deliveries,
    workerThreadsCpuMs: Object.fromEntries(Object.entries(threadsAfter).map(([name, seconds]) => [name, (1000 * (seconds - (before.threads[name] ?? 0))) / deliveries])),
    statements,
    topStatements,
    serverCpuMs,
    history: await historyOfLastDelivery(db, temporal),
    latency: run.latency,
    deliveredPerSecond: run.perSecond,
  };
}

/** Waits until no delivery is left unfinished, and the workflow tasks that close the runs have had a moment. */
async function waitForRunsToClose(db: Pool, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [row] = (await db.query<{ open: string }>(`${BENCH_QUERY} select count(*) as open from webhook_deliveries where status in ('pending', 'retrying')`)).rows;
    if (Number(row!.open) === 0) break;
    if (Date.now() > deadline) {
      console.log(`Delivery cost: ${row!.open} deliveries still pending or retrying after ${timeoutMs / 1000} s; their statements and CPU are in the figures.`);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
}

async function historyOfLastDelivery(db: Pool, temporal: TemporalClient): Promise<string[]> {
  const [row] = (await db.query<{ id: string }>(`select id from webhook_deliveries where status = 'delivered' order by created_at desc limit 1`)).rows;
  if (!row) return [];
  const history = await temporal.workflow.getHandle(deliveryWorkflowId(row.id)).fetchHistory();
  return (history.events ?? []).map((event) => {
    const type = Object.keys(event).find((key) => key.endsWith('EventAttributes') && (event as Record<string, unknown>)[key]);
    return type ? type.replace(/EventAttributes$/, '').replace(/^./, (c) => c.toUpperCase()) : String(event.eventType);
  });
}

/** One line of the figures, for the phase's log. */
export function describeDeliveryCost(cost: DeliveryCost): string {
  const servers = Object.entries(cost.serverCpuMs)
    .map(([part, ms]) => `${part} ${ms.toFixed(1)}`)
    .join(', ');
  return (
    `${cost.deliveries} deliveries at ${cost.offeredPerSecond}/s: worker ${cost.workerCpuMs.toFixed(1)} ms CPU ` +
    `(${Object.entries(cost.workerThreadsCpuMs)
      .filter(([, ms]) => ms >= 0.05)
      .sort((a, b) => b[1] - a[1])
      .map(([name, ms]) => `${name} ${ms.toFixed(1)}`)
      .join(', ')}), ` +
    `${cost.statements === null ? 'statements not counted' : `${cost.statements.toFixed(1)} statements`}, ${servers} ms CPU per delivery; ` +
    `one run's history: ${cost.history.length} events (${cost.history.join(', ')}); commit → receipt p50 ${cost.latency.p50} / p99 ${cost.latency.p99} ms`
  );
}

export interface DeliveryCostPhaseSettings {
  /** The steady rate: one event a batch, every statement of a delivery its own (the most statements a delivery makes). */
  steadyPerSecond: number;
  /** The backlog's rate: more than the worker takes up, so that a backlog waits throughout (as in phase 11). */
  backlogPerSecond: number;
  seconds: number;
  /** The Temporal server the phase's worker uses, with the CPU seconds used so far by its processes, by part. */
  temporal: { address: string; cpuSeconds: () => Record<string, number> };
  /** `--cpu-prof` of the worker into this folder when given. */
  profileDir?: string;
  around?: DeliveryCostSettings['around'];
}

/**
 * measureDeliveryCost at the steady rate, then with a backlog waiting, with a worker and an api of the phase's own on
 * the run's database and `settings.temporal`.
 */
export async function deliveryCostPhase(
  servers: Servers,
  compiled: CompiledProject,
  logDir: string,
  name: string,
  settings: DeliveryCostPhaseSettings,
): Promise<{ steady: DeliveryCost; backlog: DeliveryCost }> {
  const env = { ...phaseEnv(servers, name), TEMPORAL_ADDRESS: settings.temporal.address, WEBHOOK_ALLOW_LOOPBACK: 'true' };
  const processes: NodeProcess[] = [];
  const orm = await connectOrm(servers.databaseUrl, 2);
  const db = new Pool({ connectionString: servers.databaseUrl, max: 2 });
  let receiver: TestReceiver | null = null;
  let temporal: TemporalClient | null = null;
  try {
    const worker = startNode(
      `${name}-worker`,
      compiled.entry('src/worker/main.ts'),
      { ...env, NODE_EXTRA_CA_CERTS: testCertificate().certFile, WORKER_METRICS_PORT: '0' },
      { logDir, profileDir: settings.profileDir, as: 'start:worker' },
    );
    processes.push(worker);
    const apiPort = await freePort();
    const api = startNode(`${name}-api`, compiled.entry('src/api/main.ts'), { ...env, PORT: String(apiPort), HOST: '127.0.0.1' }, { logDir, as: 'start:api' });
    processes.push(api);
    const tenant = await seedTenant(orm, parseEncryptionKey(env.ENCRYPTION_KEY), `Delivery cost ${name}`, { keys: 1, projects: 0 });
    await Promise.all([waitForHttp(`http://127.0.0.1:${apiPort}/health`, api), waitForOutput(worker, 'worker running')]);
    receiver = await startReceiver();
    const { probe } = await probeDeliveriesOf(db, `http://127.0.0.1:${apiPort}`, tenant, receiver);
    temporal = new TemporalClient({ connection: await Connection.connect({ address: settings.temporal.address }) });
    const serverCpu = () => ({ ...servers.cpuSeconds(), ...settings.temporal.cpuSeconds() });
    const measure = (perSecond: number) => measureDeliveryCost(db, temporal!, worker, probe, { perSecond, seconds: settings.seconds, serverCpu, around: settings.around });
    return { steady: await measure(settings.steadyPerSecond), backlog: await measure(settings.backlogPerSecond) };
  } finally {
    await temporal?.connection.close();
    await receiver?.close();
    await db.end();
    await orm.close();
    for (const proc of processes.reverse()) await proc.stop();
  }
}
