/**
 * `npm run bench` (add `-- --quick` for a shorter run, `-- --profile` for CPU profiles of the api and worker during
 * each phase, `-- --only isolation` for phase 9 alone, `-- --only tracing` for phase 10 alone, `-- --only scale-out` for
 * phase 11 alone, `-- --only temporal-postgres` for phase 6e alone, with the dev server's figures measured beside it and
 * phase 12 on its server, `-- --only delivery-cost` for phase 12 on the dev server alone, `-- --only isolation-within-company` for phase 13 alone,
 * `-- --only ordering` for phase 14 alone, `-- --only filters` for phase 15 alone, `-- --only event-feeds` for phase 16 alone,
 * `-- --only front-door-burst` for phase 17 beside phase 12, `-- --only chaos` for phase 18 alone, `-- --only transformations` for phase 19 alone):
 * the service against the ceiling of the same work, measured in the same run and
 * on the same machine, with PASS or FAIL against each target of docs/benchmarks.md. Absolute figures on a
 * shared machine vary from run to run; the ratio to a ceiling measured beside them varies much less.
 *
 * One process tree: PostgreSQL and the Temporal dev server (embedded, or DATABASE_URL / TEMPORAL_ADDRESS with
 * a database of the run's own), the api and the worker as separate processes (compiled, as in production),
 * the ceiling server and its no-op Temporal worker, and this process generating the load.
 */
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'pg';
import { parseEncryptionKey } from '../src/config';
import { signWebhook } from '../src/crypto/webhook-signature';
import { runningEmbeddedPostgresUrl } from '../src/db/embedded-postgres';
import { connectOrm } from '../src/database';
import { localEncryptionKey } from '../src/local-environment';
import { startReceiver, testCertificate } from '../test/helpers/https-receiver';
import { freePort } from '../test/helpers/ports';
import { medianTimeline, type Timeline, TIMELINE_STEPS, timelineOf } from './delivery-timeline';
import { DeliveryProbe, probeDeliveriesOf, sustainedDeliveryRate, type SustainedDeliveries } from './deliveries';
import { deliveryListLatency, runRetention, seedOldDeliveries } from './history';
import { type DeliveryCost, deliveryCostPhase, describeDeliveryCost } from './delivery-cost';
import { type BurstResult, describeBurst, frontDoorBurstPhase } from './front-door-burst';
import { chaosPhase, describeChaos } from './chaos';
import { load, type LoadResult, median } from './http-load';
import { monotonicMicros, summariseProfile, type Window } from './profile';
import { measurePage, positionAt, seedWorkOrders } from './scale';
import { rotation, seedTenant, type Tenant } from './seed';
import { FILTER, filterCostPhase } from './filter-cost';
import { isolationPhase } from './isolation';
import { companyIsolationPhase } from './isolation-within-company';
import { orderingPhase } from './ordering';
import { eventFeedPhase } from './event-feeds';
import { transformationPhase, TYPICAL } from './transformations';
import { ratioToBare, TRACING_APIS, type TracingApi, tracingPhase } from './tracing';
import { type CpuShare, describeCpu, scaleOutPhase } from './scale-out';
import { devServerCpu, devServerPids } from './proc';
import { type CompiledProject, compileProject, type NodeProcess, type Servers, startNode, startServers, waitForHttp, waitForOutput } from './stack';
import { npmStart, type StartedService } from './startup';
import { measureOn, productionCeilingPhase } from './production-ceiling';
import { HISTORY_SHARDS, installTemporalServer, TEMPORAL_SERVER_VERSION } from './temporal-server';
import { retentionScheduleId } from '../src/temporal/retention-schedule';
import type { TaskQueues } from '../src/task-queues';

const args = new Set(process.argv.slice(2));
const QUICK = args.has('--quick');
const PROFILE = args.has('--profile');
/** Length of each load phase; BENCH_SECONDS shortens it further (the smoke test). */
const SECONDS = Number(process.env.BENCH_SECONDS ?? (QUICK ? 3 : 10));
const CONNECTIONS = 16;
const KEYS = QUICK ? 300 : 2000;
const SCALE_ROWS = QUICK ? [10_000, 100_000] : [10_000, 100_000, 1_000_000];
const OLD_DELIVERIES = QUICK ? 50_000 : 1_000_000;
/**
 * `--only isolation`, `--only tracing`, `--only scale-out`, `--only temporal-postgres`, `--only delivery-cost` or
 * `--only event-feeds`: phase 9, 10, 11, 6e, 12 or 15 alone (its own processes on the run's servers), without the 10
 * minutes before it.
 */
const ONLY = process.argv.includes('--only') ? (process.argv[process.argv.indexOf('--only') + 1] ?? '') : null;
const ONLY_PHASES = ['isolation', 'isolation-within-company', 'tracing', 'scale-out', 'temporal-postgres', 'delivery-cost', 'ordering', 'filters', 'event-feeds', 'front-door-burst', 'chaos', 'transformations'];
/** Phases that run beside another one named by `--only`: phase 17's burst is read against phase 12's cost of the same build. */
const ALSO_RUNS: Record<string, string[]> = { 'front-door-burst': ['delivery-cost'] };
/** Whether a phase that `--only` can name runs: alone, beside the one named, or in the full run. */
const runs = (phase: string) => ONLY === null || ONLY === phase || (ALSO_RUNS[ONLY] ?? []).includes(phase);
/** Events to the dead company's 5 endpoints in phase 9; BENCH_ISOLATION_EVENTS sizes it (the smoke test: a few). */
const ISOLATION_EVENTS = Number(process.env.BENCH_ISOLATION_EVENTS ?? (QUICK ? 200 : 2000));
/** Burst events of phase 13's company to its 5 dead endpoints, and their pace; BENCH_COMPANY_ISOLATION_EVENTS sizes it. */
const COMPANY_ISOLATION_EVENTS = Number(process.env.BENCH_COMPANY_ISOLATION_EVENTS ?? (QUICK ? 1000 : 10_000));
const COMPANY_ISOLATION_EVENTS_PER_SECOND = 200;
/** Phase 14's backlog of changes to its distinct records, each ordering's rounds; BENCH_ORDERING_EVENTS sizes it. */
const ORDERING_EVENTS = Number(process.env.BENCH_ORDERING_EVENTS ?? (QUICK ? 200 : 2000));
const ORDERING_RECORDS = Math.min(1000, ORDERING_EVENTS);
const ORDERING_ROUNDS = QUICK ? 1 : 2;
/** Events through the dispatcher per round and variant of phase 15, to 10 companies' 5 endpoints each; BENCH_FILTER_EVENTS sizes it. */
const FILTER_EVENTS = Number(process.env.BENCH_FILTER_EVENTS ?? (QUICK ? 200 : 2000));
/** Rounds of each variant: a round is two seconds, which one stall of the machine can halve; a median of many says more. */
const FILTER_ROUNDS = QUICK ? 4 : 12;
/** Signed inbound requests of phase 17's burst, from its 16 senders over 40 keys; BENCH_BURST_REQUESTS sizes it. */
const BURST_REQUESTS = Number(process.env.BENCH_BURST_REQUESTS ?? (QUICK ? 300 : 1500));
const BURST_SENDERS = 16;
const BURST_KEYS = 40;
/** Phase 17's targets (issue 60): against phase 6's paced rate of the same run, and CPU per delivered message. */
const BURST_RATE_OF_PACED = 0.8;
const BURST_SERVICE_CPU_MS = 15;
const BURST_MACHINE_CPU_MS = 50;
const FRONT_DOOR_SERVICE_CPU_MS = 8;
/**
 * Phase 18's load: twice phase 6's paced rate, for BENCH_CHAOS_SECONDS (120; the smoke test: a few), over enough keys
 * (their limits raised). The full run pauses a worker past the hand-off, then the other past an activity's heartbeat
 * timeout and a workflow task's timeout; the quick one past the hand-off only.
 */
const CHAOS_SECONDS = Number(process.env.BENCH_CHAOS_SECONDS ?? (QUICK ? 20 : 120));
const CHAOS_RATE_OF_PACED = 2;
const CHAOS_PAUSES = QUICK
  ? [{ worker: 0, at: 0.2, seconds: 2 }]
  : [
      { worker: 0, at: 0.15, seconds: 4 },
      { worker: 1, at: 0.35, seconds: 15 },
    ];
const CHAOS_KILL_AT = 0.7;
/** Phase 19's backlog of events a round, its rounds of each variant; BENCH_TRANSFORMATION_EVENTS sizes it. */
const TRANSFORMATION_EVENTS = Number(process.env.BENCH_TRANSFORMATION_EVENTS ?? (QUICK ? 200 : 2000));
const TRANSFORMATION_ROUNDS = QUICK ? 1 : 2;
/** Events phase 16 commits at once, each written to its 100 feeds; BENCH_FEED_EVENTS sizes it (the smoke test: a few). */
const FEED_EVENTS = Number(process.env.BENCH_FEED_EVENTS ?? (QUICK ? 200 : 1000));
/** Events committed a second in phase 11's delivery runs, for SECONDS: more than two workers take up here, so a backlog waits. */
const SCALE_OUT_OFFERED = 60;
const API_RSS_BUDGET_MB = 200;
const WORKER_RSS_BUDGET_MB = 400;
/** The worker while it delivers (issue 27), and `npm start`'s one process under a delivery load. */
const WORKER_DELIVERY_RSS_BUDGET_MB = 250;
const ONE_PROCESS_RSS_BUDGET_MB = 300;
/** The delivery load on `npm start`: about what one worker sustains on the dev server (phase 6). */
const ONE_PROCESS_DELIVERY_RATE = 15;
const ONE_PROCESS_DELIVERY_SECONDS = 2 * SECONDS;

type Verdict = 'PASS' | 'FAIL' | '';

interface Row {
  work: string;
  ceiling: string;
  service: string;
  ratio: string;
  target: string;
  verdict: Verdict;
}

const rows: Row[] = [];
const windows: Window[] = [];
const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1));
const latency = (r: { p50: number; p99: number; max: number }) => `p50 ${fmt(r.p50)} / p99 ${fmt(r.p99)} / max ${fmt(r.max)} ms`;
const describe = (r: LoadResult) => `${fmt(r.rps)}/s, ${latency(r)}${r.non2xx ? `, ${r.non2xx} non-2xx` : ''}${r.errors ? `, ${r.errors} errors` : ''}`;
const verdict = (ok: boolean): Verdict => (ok ? 'PASS' : 'FAIL');

function record(row: Row): void {
  rows.push(row);
  console.log(`${row.work}\n  ceiling: ${row.ceiling}\n  service: ${row.service}\n  ratio ${row.ratio}   target ${row.target}   ${row.verdict}\n`);
}

/** A peak RSS against its budget; `service` tells more than the figure when given. */
function recordPeakRss(work: string, peakMb: number, budgetMb: number, service = `${fmt(peakMb)} MB peak`): void {
  record({ work, ceiling: '–', service, ratio: '–', target: `≤ ${budgetMb} MB`, verdict: verdict(peakMb <= budgetMb) });
}

/** Times `work` as a window of the CPU profiles. */
async function profiled<T>(label: string, work: () => Promise<T>): Promise<T> {
  const from = monotonicMicros();
  try {
    return await work();
  } finally {
    windows.push({ label, from, to: monotonicMicros() });
  }
}

async function main() {
  if (ONLY !== null && !ONLY_PHASES.includes(ONLY)) throw new Error(`--only takes ${ONLY_PHASES.map((p) => JSON.stringify(p)).join(', ')}, not ${JSON.stringify(ONLY)}`);
  const started = Date.now();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'construction-bench-'));
  // As root, PostgreSQL runs as the postgres user: a folder it can enter keeps its clusters in here, removed with it.
  chmodSync(dir, 0o755);
  const profileDir = PROFILE ? mkdtempSync(path.join(os.tmpdir(), 'construction-bench-profiles-')) : undefined;
  console.log(
    `${QUICK ? 'Quick' : 'Full'} benchmark${ONLY ? `, ${ONLY} phase only` : ''}: ${SECONDS} s load phases, ${CONNECTIONS} connections, ${os.cpus().length} CPUs, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`,
  );

  // Phase 6e's server, built first if need be (minutes, once): a missing Go fails the run before its other phases, not after.
  const temporalServerDir = runs('temporal-postgres') && (!QUICK || ONLY) ? installTemporalServer() : null;

  if (!ONLY) await startupPhase(dir);

  const [servers, compiled] = await Promise.all([startServers(path.join(dir, 'servers')), compileProject()]);
  try {
    if (!ONLY) await servicePhases(servers, compiled, { dir, profileDir, started });
    if (runs('delivery-cost')) {
      await deliveryCost(servers, compiled, dir, profileDir, { label: 'the dev server', name: 'delivery-cost', temporal: { address: servers.temporalAddress, cpuSeconds: () => ({}) } });
    }
    if (runs('front-door-burst')) await frontDoorBurst(servers, compiled, dir);
    if (runs('chaos')) await chaos(servers, compiled, dir);
    if (temporalServerDir) await productionCeiling(servers, compiled, dir, temporalServerDir, profileDir);
    else if (runs('temporal-postgres')) console.log('6e. Production ceiling (Temporal on PostgreSQL): not run with --quick; `npm run bench -- --only temporal-postgres` runs it alone.\n');
    // Phases 10, 11 and 9 each start processes of their own, with the other phases' processes stopped.
    if (runs('tracing')) await tracing(servers, compiled, dir, profileDir);
    if (runs('scale-out')) await scaleOut(servers, compiled, dir);
    // Last, as before: its thousands of deliveries and their workflow histories stay on the servers after it.
    if (runs('isolation')) await isolation(servers, compiled, dir);
    if (runs('isolation-within-company')) await isolationWithinCompany(servers, compiled, dir);
    if (runs('ordering')) await ordering(servers, compiled, dir);
    if (runs('filters')) await filterCost(servers);
    if (runs('event-feeds')) await eventFeeds(servers, compiled, dir);
    if (runs('transformations')) await transformations(servers, compiled, dir);
  } finally {
    await servers.stop();
    compiled.remove();
    rmSync(dir, { recursive: true, force: true });
  }

  printTable();
  if (profileDir) {
    // Each thread of each process profiled (phases 1 to 8's api and worker, phase 12's worker), over the phases it ran in.
    for (const file of readdirSync(profileDir, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.cpuprofile'))) {
      console.log(`\nCPU profile ${profileDir}/${file}, by phase:`);
      for (const window of windows) {
        const summary = summariseProfile(path.join(profileDir, file), window);
        if (summary !== null) console.log(summary);
      }
    }
  }
  console.log(`\nFinished in ${((Date.now() - started) / 1000).toFixed(0)} s; load average now ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}.`);
}

/** Phases 1 to 8 and the RSS of their api and worker. */
async function servicePhases(servers: Servers, compiled: CompiledProject, run: { dir: string; profileDir: string | undefined; started: number }): Promise<void> {
  const { dir, profileDir, started } = run;
  const encryptionKey = randomBytes(32).toString('hex');
  const benchId = randomUUID();
  const taskQueues: TaskQueues = { operations: `bench-operations-${benchId}`, deliveries: `bench-deliveries-${benchId}` };
  const noopQueue = `bench-noop-${randomUUID()}`;
  const common = {
    DATABASE_URL: servers.databaseUrl,
    TEMPORAL_ADDRESS: servers.temporalAddress,
    TEMPORAL_OPERATIONS_TASK_QUEUE: taskQueues.operations,
    TEMPORAL_DELIVERIES_TASK_QUEUE: taskQueues.deliveries,
    TEMPORAL_DRAIN_TASK_QUEUE: '',
    ENCRYPTION_KEY: encryptionKey,
    LOG_LEVEL: 'info',
  };
  const [apiPort, ceilingPort] = [await freePort(), await freePort()];
  const processes: NodeProcess[] = [];
  const orm = await connectOrm(servers.databaseUrl, 8);
  const db = new Pool({ connectionString: servers.databaseUrl, max: 4 });
  const temporal = new TemporalClient({ connection: await Connection.connect({ address: servers.temporalAddress }) });
  const receiver = await startReceiver();
  const rss = { api: 0, worker: 0, workerDeliveries: 0 };
  try {
    const logDir = dir;
    const worker = startNode(
      'worker',
      compiled.entry('src/worker/main.ts'),
      // Metrics on any free port: the suite's crash tests run workers beside the smoke test of this benchmark.
      { ...common, WEBHOOK_ALLOW_LOOPBACK: 'true', NODE_EXTRA_CA_CERTS: testCertificate().certFile, WORKER_METRICS_PORT: '0' },
      { logDir, profileDir, as: 'start:worker' },
    );
    const api = startNode('api', compiled.entry('src/api/main.ts'), { ...common, PORT: String(apiPort), HOST: '127.0.0.1', WEBHOOK_ALLOW_LOOPBACK: 'true' }, {
      logDir,
      profileDir,
      as: 'start:api',
    });
    const ceiling = startNode('ceiling', compiled.entry('bench/ceiling-server.ts'), { ...common, PORT: String(ceilingPort), NOOP_TASK_QUEUE: noopQueue }, { logDir });
    const noopWorker = startNode('noop-worker', compiled.entry('bench/noop-worker.ts'), { ...common, NOOP_TASK_QUEUE: noopQueue }, { logDir });
    processes.push(worker, api, ceiling, noopWorker);
    const key = parseEncryptionKey(encryptionKey);
    const tenant = await seedTenant(orm, key, 'Bench Construction', { keys: KEYS, projects: 200 });
    await Promise.all([
      waitForHttp(`http://127.0.0.1:${apiPort}/health`, api),
      waitForHttp(`http://127.0.0.1:${ceilingPort}/json`, ceiling),
      waitForOutput(worker, 'worker running'),
      waitForOutput(noopWorker, 'noop worker running'),
    ]);
    console.log(`Ready after ${((Date.now() - started) / 1000).toFixed(0)} s: ${KEYS} API keys, 200 projects.\n`);

    const service = `http://127.0.0.1:${apiPort}`;
    const keyOf = rotation(tenant);
    await requestPhases({ url: service, proc: api }, { url: `http://127.0.0.1:${ceilingPort}`, proc: ceiling }, tenant, keyOf);
    rss.api = api.peakRssMb();

    const deliveryTenant = await seedTenant(orm, key, 'Bench Deliveries', { keys: 200, projects: 0 });
    const endpoint = await fetch(`${service}/api/v1/webhook-endpoints`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': deliveryTenant.keys[0]!.key },
      body: JSON.stringify({ url: receiver.url, event_types: ['customer.created'] }),
    });
    if (endpoint.status !== 201) throw new Error(`endpoint registration answered ${endpoint.status}`);
    const endpointId = ((await endpoint.json()) as { id: string }).id;
    const [{ data }] = (await db.query(`select data from outbox_events where company_id = $1 and event_type = 'customer.created' limit 1`, [tenant.companyId])).rows;
    const probe = new DeliveryProbe(db, { companyId: deliveryTenant.companyId, eventType: 'customer.created', data }, receiver);
    rss.worker = worker.peakRssMb();
    worker.resetPeakRss();
    await deliveryPhase(db, temporal, noopQueue, probe);
    rss.workerDeliveries = worker.peakRssMb();
    if (!QUICK) await workflowShapePhase(compiled.entry('bench/temporal-variants.ts'), servers.temporalAddress, dir);

    const scaleTenant = await seedTenant(orm, key, 'Bench Scale', { keys: 100, projects: 1 });
    await scalePhase(db, service, scaleTenant);
    await historyPhase(db, temporal, taskQueues, service, rotation(deliveryTenant), deliveryTenant.companyId, endpointId, probe);
    rss.api = Math.max(rss.api, api.peakRssMb());
    rss.worker = Math.max(rss.worker, worker.peakRssMb());
  } finally {
    await receiver.close();
    await temporal.connection.close();
    await db.end();
    await orm.close();
    for (const proc of processes.reverse()) await proc.stop();
  }
  recordPeakRss('RSS under load: api process', rss.api, API_RSS_BUDGET_MB);
  recordPeakRss('RSS under load: worker process, phases 1 to 8', rss.worker, WORKER_RSS_BUDGET_MB);
  recordPeakRss('RSS under the delivery load (phase 6): worker process', rss.workerDeliveries, WORKER_DELIVERY_RSS_BUDGET_MB);
}

/** Phase 6's figures on the dev server, for phase 6e to stand beside its own. */
let devServerDeliveries: SustainedDeliveries | null = null;

/**
 * Phase 6e (bench/production-ceiling.ts, issue 27): phase 6's no-op workflow ceiling and deliveries sustained, on the
 * Temporal server with PostgreSQL persistence beside the dev server's (phase 6's when the run measured them). Figures
 * without a target: what the server's persistence changes on this machine.
 */
async function productionCeiling(servers: Servers, compiled: CompiledProject, dir: string, serverDir: string, profileDir: string | undefined): Promise<void> {
  const { devServer, postgres } = await productionCeilingPhase(servers, compiled, dir, {
    ceilingSeconds: Math.max(SECONDS, 5),
    stepSeconds: QUICK ? 3 : 10,
    serverDir,
    devServer: devServerDeliveries,
    // Phase 12 on this server too, while it runs; its processes named apart from the run's PostgreSQL.
    alsoOnPostgres: (temporal) =>
      deliveryCost(servers, compiled, dir, profileDir, {
        label: `Temporal server ${TEMPORAL_SERVER_VERSION.slice(1)} on PostgreSQL`,
        name: 'delivery-cost-postgres',
        temporal: {
          address: temporal.address,
          cpuSeconds: () => Object.fromEntries(Object.entries(temporal.cpuSeconds()).map(([part, seconds]) => [`Temporal ${part === 'server' ? 'server' : `server's ${part}`}`, seconds])),
        },
      }),
  });
  const cpu = (figures: SustainedDeliveries) => {
    const parts = Object.entries(figures.cpuMsPerWorkflow);
    return `${parts.length ? `; ${parts.map(([part, ms]) => `${part} ${ms.toFixed(1)}`).join(' + ')} ms CPU/workflow` : ''}; machine ${figures.machineCores.toFixed(2)} of ${os.cpus().length} cores busy`;
  };
  const where = devServer.measuredHere ? 'measured in this phase' : "phase 6's";
  // With TEMPORAL_ADDRESS, the run's server is that one rather than a dev server of its own.
  const runServer = process.env.TEMPORAL_ADDRESS ? `the run's Temporal server at TEMPORAL_ADDRESS (${where})` : `the dev server (SQLite file, ${where})`;
  const settings = postgres.postgresSettings.length ? postgres.postgresSettings.join(', ') : 'fsync and synchronous_commit on';
  const server = `Temporal server ${TEMPORAL_SERVER_VERSION.slice(1)} on PostgreSQL (${HISTORY_SHARDS} history shards, ${settings})`;
  record({
    work: `6e. No-op workflow ceiling (workflows of one no-op activity, 50 in flight): ${server} | ${runServer}`,
    ceiling: `${fmt(devServer.ceiling)}/s${cpu(devServer)}`,
    service: `${fmt(postgres.ceiling)}/s${cpu(postgres)}`,
    ratio: (postgres.ceiling / devServer.ceiling).toFixed(2),
    target: '–',
    verdict: '',
  });
  const ratio = postgres.sustained / postgres.ceiling;
  record({
    work: `6e. Deliveries sustained until latency bends (phase 6's steps against its ceiling): ${server} | its no-op workflow ceiling`,
    ceiling: `${fmt(postgres.ceiling)}/s; ${runServer}: ${fmt(devServer.sustained)} of ${fmt(devServer.ceiling)}/s (${(devServer.sustained / devServer.ceiling).toFixed(2)})`,
    service: `${fmt(postgres.sustained)}/s (${postgres.steps.join('; ')})`,
    ratio: ratio.toFixed(2),
    target: '≥ 0.8',
    verdict: verdict(ratio >= 0.8),
  });
}

/** Phase 12's figures with a backlog on the dev server, for phase 17 to stand beside its own. */
let devServerDeliveryCost: DeliveryCost | null = null;

/**
 * Phase 17 (bench/front-door-burst.ts, issue 60): a burst of signed inbound requests through the front door, each a
 * delivery, against phase 6's paced rate of the same run (measured here when the run did not), beside phase 12's cost.
 */
async function frontDoorBurst(servers: Servers, compiled: CompiledProject, dir: string): Promise<void> {
  const paced =
    devServerDeliveries ?? (await measureOn('front-door-paced', servers.temporalAddress, devServerCpu, servers, compiled, dir, { ceilingSeconds: Math.max(SECONDS, 5), stepSeconds: QUICK ? 3 : 10 }));
  const { withEndpoint, frontDoorAlone } = await frontDoorBurstPhase(servers, compiled, dir, {
    requests: BURST_REQUESTS,
    senders: BURST_SENDERS,
    keys: BURST_KEYS,
    serverCpu: () => servers.cpuSeconds(),
    around: (label, work) => profiled(`17. ${label}`, work),
  });
  console.log(`17. Front door burst, one endpoint: ${describeBurst(withEndpoint)}`);
  console.log(`17. Front door alone, no endpoint: ${describeBurst(frontDoorAlone)}`);
  const rate = withEndpoint.delivered / withEndpoint.seconds;
  const cost = devServerDeliveryCost ? `; phase 12 of this run: worker ${devServerDeliveryCost.workerCpuMs.toFixed(1)} ms a delivery with a backlog` : '';
  const burst = `${BURST_REQUESTS} signed employee.created from ${BURST_SENDERS} senders over ${BURST_KEYS} keys, one endpoint`;
  record({
    work: `17. Front door burst: deliveries a second (${burst}) | phase 6's sustained paced rate of this run`,
    ceiling: `${fmt(paced.sustained)}/s (${paced.steps.join('; ')})${cost}`,
    service: `${fmt(rate)}/s: ${withEndpoint.delivered} delivered in ${withEndpoint.seconds.toFixed(1)} s, ${withEndpoint.receivedTwice} received twice`,
    ratio: (rate / Math.max(0.001, paced.sustained)).toFixed(2),
    target: `≥ ${BURST_RATE_OF_PACED}`,
    verdict: verdict(rate >= BURST_RATE_OF_PACED * paced.sustained && withEndpoint.delivered >= withEndpoint.accepted && withEndpoint.accepted === BURST_REQUESTS),
  });
  record({
    work: `17a. Front door burst: runs failed, first workflow tasks failed, first attempts received twice (${withEndpoint.historiesRead} histories read)`,
    ceiling: '–',
    service: `${withEndpoint.runsFailed} failed, ${withEndpoint.firstTasksFailed} first tasks failed, ${withEndpoint.firstAttemptsTwice} first attempts twice`,
    ratio: '–',
    target: '0 failed, 0 twice',
    verdict: verdict(withEndpoint.runsFailed === 0 && withEndpoint.firstAttemptsTwice === 0),
  });
  const cpu = (result: BurstResult) => Object.entries(result.cpuMsPer).map(([part, ms]) => `${part} ${ms.toFixed(1)}`).join(', ');
  record({
    work: `17b. Front door burst: CPU ms per delivered message by process, the driver's own left out`,
    ceiling: '–',
    service: cpu(withEndpoint),
    ratio: '–',
    target: `service ≤ ${BURST_SERVICE_CPU_MS}, machine ≤ ${BURST_MACHINE_CPU_MS}`,
    verdict: verdict(withEndpoint.cpuMsPer.service! <= BURST_SERVICE_CPU_MS && withEndpoint.cpuMsPer.machine! <= BURST_MACHINE_CPU_MS),
  });
  record({
    work: `17c. The front door alone: the same burst with no endpoint subscribed, CPU ms per accepted request`,
    ceiling: '–',
    service: `${cpu(frontDoorAlone)}; ${fmt(frontDoorAlone.accepted / frontDoorAlone.frontDoorSeconds)} accepted/s`,
    ratio: '–',
    target: `service ≤ ${FRONT_DOOR_SERVICE_CPU_MS}`,
    verdict: verdict(frontDoorAlone.cpuMsPer.service! <= FRONT_DOOR_SERVICE_CPU_MS && frontDoorAlone.accepted === BURST_REQUESTS),
  });
}

/**
 * Phase 18 (bench/chaos.ts, issue 61): twice phase 6's paced rate through the front door, with deadlocks provoked,
 * workers paused and one killed: nothing lost, and nothing received twice but what the kill cut between send and record.
 */
async function chaos(servers: Servers, compiled: CompiledProject, dir: string): Promise<void> {
  const paced =
    devServerDeliveries ?? (await measureOn('chaos-paced', servers.temporalAddress, devServerCpu, servers, compiled, dir, { ceilingSeconds: Math.max(SECONDS, 5), stepSeconds: QUICK ? 3 : 10 }));
  const perSecond = Math.max(10, Math.round(CHAOS_RATE_OF_PACED * paced.sustained));
  const result = await chaosPhase(servers, compiled, dir, {
    seconds: CHAOS_SECONDS,
    perSecond,
    keys: BURST_KEYS,
    pauses: CHAOS_PAUSES,
    killAt: CHAOS_KILL_AT,
    drainMs: 600_000,
  });
  console.log(`18. Chaos: ${describeChaos(result)}`);
  record({
    work: `18. Chaos: ${perSecond} signed employee.created a second (twice phase 6's paced ${fmt(paced.sustained)}/s) for ${CHAOS_SECONDS} s, two workers, deadlocks provoked, ${CHAOS_PAUSES.length} pauses, one kill`,
    ceiling: '–',
    service: describeChaos(result),
    ratio: '–',
    target: '0 lost, received twice ≤ sends the kill cut',
    verdict: verdict(result.lost === 0 && result.receivedTwice <= result.cutByKill && result.accepted > 0),
  });
}

/** Phase 12's rates: one event at a time, and a backlog waiting (as phase 11's). */
const COST_STEADY_PER_SECOND = 10;
const COST_BACKLOG_PER_SECOND = 60;
const WORKER_CPU_PER_DELIVERY_MS = 12;
const STATEMENTS_PER_DELIVERY = 8;

/**
 * Phase 12 (bench/delivery-cost.ts) on one Temporal server: what one delivered event costs the worker (with a backlog
 * waiting), the statements it makes (one at a time: the most), and what PostgreSQL and Temporal spend on it.
 */
async function deliveryCost(servers: Servers, compiled: CompiledProject, dir: string, profileDir: string | undefined, on: { label: string; name: string; temporal: { address: string; cpuSeconds: () => Record<string, number> } }): Promise<void> {
  const { steady, backlog } = await deliveryCostPhase(servers, compiled, dir, on.name, {
    steadyPerSecond: COST_STEADY_PER_SECOND,
    backlogPerSecond: COST_BACKLOG_PER_SECOND,
    seconds: SECONDS,
    temporal: on.temporal,
    profileDir,
    around: (work) => profiled(`12. delivery cost, ${on.label}`, work),
  });
  if (on.name === 'delivery-cost') devServerDeliveryCost = backlog;
  for (const [when, cost] of [['one at a time', steady], ['a backlog waiting', backlog]] as const) {
    console.log(`12. Delivery cost on ${on.label}, ${when}: ${describeDeliveryCost(cost)}`);
    for (const statement of cost.topStatements) console.log(`  ${statement.calls.toFixed(2)} × ${statement.query}`);
  }
  const threads = (cost: typeof steady) =>
    Object.entries(cost.workerThreadsCpuMs)
      .filter(([, ms]) => ms >= 0.05)
      .sort((a, b) => b[1] - a[1])
      .map(([name, ms]) => `${name} ${ms.toFixed(1)}`)
      .join(', ');
  const serversCpu = (cost: typeof steady) => Object.entries(cost.serverCpuMs).map(([part, ms]) => `${part} ${ms.toFixed(1)}`).join(', ');
  record({
    work: `12. Worker CPU per delivered event, ${COST_BACKLOG_PER_SECOND}/s committed for ${SECONDS} s (a backlog waiting), one endpoint: ${on.label}`,
    ceiling: '–',
    service: `${backlog.workerCpuMs.toFixed(1)} ms (${threads(backlog)}); ${backlog.deliveries} delivered; ${serversCpu(backlog)} ms CPU per delivery; ${fmt(backlog.deliveredPerSecond)} delivered/s`,
    ratio: '–',
    target: `≤ ${WORKER_CPU_PER_DELIVERY_MS} ms`,
    verdict: verdict(backlog.workerCpuMs <= WORKER_CPU_PER_DELIVERY_MS && backlog.deliveries > 0),
  });
  record({
    work: `12. SQL statements per delivered event, first attempt succeeds, ${COST_STEADY_PER_SECOND}/s (one event a batch; pg_stat_statements, transaction control counted, a function's call once): ${on.label}`,
    ceiling: '–',
    service:
      steady.statements === null
        ? 'not counted: the database has no pg_stat_statements'
        : `${steady.statements.toFixed(1)} (${steady.topStatements.map((s) => `${s.calls.toFixed(1)} × ${s.query.split(' ').slice(0, 4).join(' ')}`).join('; ')}); with a backlog ${backlog.statements?.toFixed(1)}; history ${steady.history.length} events, one workflow task`,
    ratio: '–',
    target: `≤ ${STATEMENTS_PER_DELIVERY}`,
    verdict: steady.statements === null ? 'FAIL' : verdict(steady.statements <= STATEMENTS_PER_DELIVERY && steady.deliveries > 0),
  });
}

/**
 * Phase 10 (bench/tracing.ts): the api with tracing switched off and with it on, and a second api without any tracing
 * setting as the run's yardstick, each against the api without any tracing setting, by the api's CPU time per request
 * compared within each round of slices (requests a second shown too).
 */
async function tracing(servers: Servers, compiled: CompiledProject, dir: string, profileDir: string | undefined): Promise<void> {
  const result = await tracingPhase(servers, compiled, dir, { rounds: QUICK ? 6 : 12, sliceSeconds: SECONDS / 4, connections: CONNECTIONS, keys: KEYS, profileDir });
  const exported = `${result.exports} OTLP exports, ${fmt(result.exportedBytes / 1024)} KiB for the phase`;
  for (const [i, measure] of result.measures.entries()) {
    const letter = 'ab'[i]!;
    const of = (api: TracingApi) => {
      const slices = measure.rounds.map((round) => round[api]);
      return `${median(slices.map((s) => s.cpuMsPerRequest)).toFixed(2)} ms CPU/request, ${fmt(median(slices.map((s) => s.load.rps)))} req/s (medians of ${slices.length} slices)`;
    };
    console.log(`  ${measure.work}, ms CPU/request by round (${TRACING_APIS.join('/')}): ${measure.rounds.map((r) => TRACING_APIS.map((api) => r[api].cpuMsPerRequest.toFixed(2)).join('/')).join(' ')}`);
    console.log(
      `  ${measure.work}, tracing on exported ${measure.spans} spans in ${measure.traces} traces (${(measure.spans / Math.max(1, measure.traces)).toFixed(1)} a trace): ` +
        measure.spansByName.map(([name, count]) => `${name} ${count}`).join(', '),
    );
    const rows: { api: Exclude<TracingApi, 'bare'>; work: string; target: string; meets?: (ratio: number) => boolean }[] = [
      { api: 'control', work: 'Yardstick: a second api without any tracing setting (the same code and settings as bare)', target: '–' },
      { api: 'off', work: 'Tracing off (OTEL_TRACES_EXPORTER=none, collector settings present)', target: '0.97–1.03', meets: (ratio) => Math.abs(1 - ratio) <= 0.03 },
      { api: 'on', work: `Tracing on (OTLP/HTTP protobuf, batched; ${exported})`, target: '≥ 0.85', meets: (ratio) => ratio >= 0.85 && result.exports > 0 },
    ];
    const bare = of('bare');
    for (const row of rows) {
      const ratio = ratioToBare(measure, row.api);
      record({
        work: `10${letter}. ${row.work}: ${measure.work} | no OTEL_* variable, median of the rounds' ratios`,
        ceiling: bare,
        service: of(row.api),
        ratio: ratio.toFixed(2),
        target: row.target,
        verdict: row.meets ? verdict(row.meets(ratio)) : '',
      });
    }
  }
}

/**
 * Phase 11 (bench/scale-out.ts): deliveries a second with one worker process and with two, and the REST list's requests
 * a second with one api process and with two, on this machine. Recorded figures, not targets: on 2 cores shared with
 * PostgreSQL, the Temporal dev server and the load driver, a second process cannot double anything; each row says
 * where the cores went.
 */
async function scaleOut(servers: Servers, compiled: CompiledProject, dir: string): Promise<void> {
  const result = await scaleOutPhase(servers, compiled, dir, { seconds: SECONDS, connections: CONNECTIONS, keys: KEYS, offeredPerSecond: SCALE_OUT_OFFERED, drainMs: 10 * 60_000 });
  const cpu = (share: CpuShare) => `${describeCpu(share)} (${fmt(share.seconds)} s)`;
  const [oneWorker, twoWorkers] = result.deliveries;
  const deliveries = (run: typeof oneWorker) =>
    `${fmt(run.perSecond)}/s (${run.received} of ${run.sent} received${run.saturated ? '' : `; not saturated: the workers kept up with the ${SCALE_OUT_OFFERED}/s offered`}), ` +
    `${fmt(run.cpuMsPerDelivery)} ms worker CPU/delivery; ${cpu(run.cpu)}`;
  record({
    work: `11. Scale-out: deliveries a second with a backlog waiting (${SCALE_OUT_OFFERED}/s committed for ${SECONDS} s, one endpoint, one receiver), 2 worker processes | 1 worker process`,
    ceiling: deliveries(oneWorker),
    service: deliveries(twoWorkers),
    ratio: (twoWorkers.perSecond / oneWorker.perSecond).toFixed(2),
    target: '–',
    verdict: '',
  });
  const [oneApi, twoApis] = result.list;
  const list = (run: typeof oneApi) =>
    `${fmt(run.perSecond)}/s${run.parts.length > 1 ? ` (${run.parts.map((part) => `${fmt(part.rps)}/s, ${latency(part)}`).join('; ')})` : `, ${latency(run.parts[0]!)}`}` +
    `${run.parts.some((part) => part.non2xx || part.errors) ? `, ${run.parts.reduce((sum, part) => sum + part.non2xx, 0)} non-2xx, ${run.parts.reduce((sum, part) => sum + part.errors, 0)} errors` : ''}, ` +
    `${run.cpuMsPerRequest.toFixed(2)} ms api CPU/request; ${cpu(run.cpu)}`;
  record({
    work: `11b. Scale-out: REST list GET /projects?limit=50 (of 200), 2 api processes with ${Math.floor(CONNECTIONS / 2)} connections each (two autocannon instances at once) | 1 api process with ${CONNECTIONS}`,
    ceiling: list(oneApi),
    service: list(twoApis),
    ratio: (twoApis.perSecond / oneApi.perSecond).toFixed(2),
    target: '–',
    verdict: '',
  });
}

/**
 * Phase 9 (bench/isolation.ts): a healthy company's deliveries while another company's ISOLATION_EVENTS × 5 go to
 * dead endpoints, and every one of those accounted for once the endpoints are back.
 */
async function isolation(servers: Servers, compiled: CompiledProject, dir: string): Promise<void> {
  const result = await isolationPhase(servers, compiled, dir, { events: ISOLATION_EVENTS, probeRate: 1, probeSeconds: Math.max(SECONDS, 2), timeoutMs: 20 * 60_000 });
  const n = result.deliveries.toLocaleString('en-US');
  const againstQuiet = (phase: string, label: string, during: { p50: number; p99: number; max: number }, received: number, sent: number, detail = '') => {
    const p50Ratio = during.p50 / result.quiet.p50;
    const p99Ratio = during.p99 / result.quiet.p99;
    record({
      work: `${phase}. Isolation: a healthy company's commit → receipt while another company's ${n} deliveries to dead endpoints ${label} | the same, quiet`,
      ceiling: latency(result.quiet),
      service: `${latency(during)} (${received} of ${sent} received${detail})`,
      ratio: `${p50Ratio.toFixed(2)} (p50), ${p99Ratio.toFixed(2)} (p99)`,
      target: 'p50 and p99 ≤ 2 × quiet',
      verdict: verdict(p50Ratio <= 2 && p99Ratio <= 2 && received === sent),
    });
  };
  againstQuiet(
    '9',
    `are dispatched and taken up (${fmt(result.loadSeconds)} s)`,
    result.during,
    result.duringReceived,
    result.duringSent,
    `; commit → dispatched p50 ${fmt(result.duringDispatch.p50)} / p99 ${fmt(result.duringDispatch.p99)} ms, dispatched → first attempt p50 ${fmt(result.duringToAttempt.p50)} / p99 ${fmt(result.duringToAttempt.p99)} ms`,
  );
  againstQuiet('9a', 'are deferred, held or hanging', result.held, result.heldReceived, result.heldSent);
  record({
    work: `9b. Isolation: the ${n} after the endpoints came back (${result.openBreakers} of 5 breakers open, ${result.heldAtRecovery} held; ${fmt(result.recoverySeconds)} s waited; phase ${fmt(result.seconds)} s)`,
    ceiling: '–',
    service:
      `${result.delivered} delivered, ${result.failedWithAlert} failed with an alert, ${result.unfinished} neither when the wait ended; ${result.duplicates} received twice, ` +
      `${result.deliveredUnseen} recorded delivered but not received; healthy company ${result.healthyLost} lost`,
    ratio: '–',
    target: 'each delivered once per X-Webhook-ID, or failed with its alert',
    verdict: verdict(result.unfinished === 0 && result.duplicates === 0 && result.deliveredUnseen === 0 && result.healthyLost === 0),
  });
  recordPeakRss('9c. Isolation: worker RSS during the phase', result.workerRssMb, WORKER_RSS_BUDGET_MB);
}

/**
 * Phase 13 (bench/isolation-within-company.ts, issue 43): a healthy endpoint's deliveries while its own company commits
 * COMPANY_ISOLATION_EVENTS events to 5 dead endpoints, and those deliveries all written and tried.
 */
/**
 * Phase 15 (bench/filter-cost.ts, issue 47): the dispatcher's events a second with a 10-condition filter on every
 * endpoint against none (the median round of each), and one evaluation of the compiled filter.
 */
async function filterCost(servers: Servers): Promise<void> {
  const result = await filterCostPhase(servers.databaseUrl, { companies: 10, endpointsPerCompany: 5, events: FILTER_EVENTS, rounds: FILTER_ROUNDS });
  // The median round of each: on a shared machine one round's rate swings by half, both variants' alike.
  const middle = (filtered: boolean) => {
    const own = result.rounds.filter((r) => r.filtered === filtered);
    return { rate: median(own.map((r) => r.events / r.seconds)), deliveries: median(own.map((r) => r.deliveries / r.seconds)), cpu: median(own.map((r) => r.cpuMicrosPerEvent)) };
  };
  const [none, filtered] = [middle(false), middle(true)];
  const describeRound = (r: typeof none) => `${fmt(r.rate)} events/s (${fmt(r.deliveries)} deliveries/s), ${fmt(r.cpu)} µs of its CPU per event`;
  const ratio = filtered.rate / none.rate;
  const rate = (r: (typeof result.rounds)[number]) => r.events / r.seconds;
  console.log(`15. Rounds in order: ${result.rounds.map((r) => `${r.filtered ? 'filter' : 'none'} ${fmt(rate(r))}/s`).join(', ')}\n`);
  record({
    work: `15a. Dispatcher fan-out of ${FILTER_EVENTS.toLocaleString('en-US')} events to 10 companies × 5 endpoints: a ${FILTER.and!.length}-condition filter on every endpoint | no filter (median of ${result.settings.rounds} rounds each)`,
    ceiling: describeRound(none),
    service: describeRound(filtered),
    ratio: ratio.toFixed(2),
    target: '≥ 0.90',
    verdict: verdict(ratio >= 0.9),
  });
  record({
    work: `15b. One evaluation of the compiled ${FILTER.and!.length}-condition filter on an event's body (compiled once per endpoint version)`,
    ceiling: '–',
    service: `${fmt(result.evaluationNs)} ns (compiling it: ${fmt(result.compileMicros)} µs)`,
    ratio: '–',
    target: '≤ 2,000 ns',
    verdict: verdict(result.evaluationNs <= 2000),
  });
}

async function isolationWithinCompany(servers: Servers, compiled: CompiledProject, dir: string): Promise<void> {
  const result = await companyIsolationPhase(servers, compiled, dir, {
    events: COMPANY_ISOLATION_EVENTS,
    eventsPerSecond: COMPANY_ISOLATION_EVENTS_PER_SECOND,
    // Five a second: each round's p99 is then read from 150 events or more, not from its slowest of 60.
    probeRate: 5,
    probeSeconds: Math.max(SECONDS, 2),
    timeoutMs: 10 * 60_000,
  });
  const burst = `${COMPANY_ISOLATION_EVENTS.toLocaleString('en-US')} events (${COMPANY_ISOLATION_EVENTS_PER_SECOND}/s) to its 5 dead endpoints`;
  const againstQuiet = (phase: string, label: string, during: { p50: number; p99: number; max: number }, received: number, sent: number, detail = '') => {
    const p99Ratio = during.p99 / result.quiet.p99;
    record({
      work: `${phase}. Isolation within a company: its healthy endpoint's commit → receipt while ${label} | the same, quiet`,
      ceiling: latency(result.quiet),
      service: `${latency(during)} (${received} of ${sent} received${detail})`,
      ratio: `${(during.p50 / result.quiet.p50).toFixed(2)} (p50), ${p99Ratio.toFixed(2)} (p99)`,
      target: 'p99 ≤ 2 × quiet',
      verdict: verdict(p99Ratio <= 2 && received === sent),
    });
  };
  const stages = ({ dispatch, toAttempt }: (typeof result)['quietStages']) =>
    `commit → written p50 ${fmt(dispatch.p50)} / p99 ${fmt(dispatch.p99)} ms, written → first attempt p50 ${fmt(toAttempt.p50)} / p99 ${fmt(toAttempt.p99)} ms`;
  console.log(`13. Isolation within a company, quiet: ${stages(result.quietStages)}.`);
  againstQuiet('13', `the company commits ${burst} (${fmt(result.burstSeconds)} s)`, result.during, result.duringReceived, result.duringSent, `; ${stages(result.duringStages)}`);
  againstQuiet(
    '13a',
    `its dead endpoints' ${result.deadWritten.toLocaleString('en-US')} deliveries are deferred, held or hanging`,
    result.after,
    result.afterReceived,
    result.afterSent,
    `; ${stages(result.afterStages)}`,
  );
  record({
    work: `13b. Isolation within a company: the dead endpoints' deliveries (phase ${fmt(result.seconds)} s)`,
    ceiling: '–',
    service:
      `${result.deadWritten} of ${result.deadOwed} written, ${result.deferredAtEnd} deferred at the end; ${result.deadAttempted} of 5 endpoints attempted; ` +
      `at most ${result.maxStartedRuns} runs started on one (its budget ${result.runCap} in trouble before its first delivery, one more to probe with while its breaker is open and none is held; in trouble: failing, or an attempt in flight over 5 s); ` +
      `healthy endpoint ${result.healthyLost} lost, ${result.healthyDuplicates} received twice`,
    ratio: '–',
    target: 'every delivery written, every endpoint tried, the healthy one received each once',
    verdict: verdict(result.deadWritten === result.deadOwed && result.deadAttempted === 5 && result.healthyLost === 0 && result.healthyDuplicates === 0),
  });
  recordPeakRss('13c. Isolation within a company: worker RSS during the phase', result.workerRssMb, WORKER_RSS_BUDGET_MB);
}

/**
 * Phase 14 (bench/ordering.ts, issue 46): deliveries a second to an endpoint ordered per record, against one not
 * ordered, on a backlog of changes to ORDERING_RECORDS distinct records.
 */
async function ordering(servers: Servers, compiled: CompiledProject, dir: string): Promise<void> {
  const result = await orderingPhase(servers, compiled, dir, { events: ORDERING_EVENTS, records: ORDERING_RECORDS, rounds: ORDERING_ROUNDS, timeoutMs: 5 * 60_000 });
  const mean = (rates: number[]) => rates.reduce((sum, rate) => sum + rate, 0) / rates.length;
  const ratio = mean(result.perRecord) / mean(result.none);
  record({
    work: `14. Ordered delivery: deliveries a second, ${ORDERING_EVENTS.toLocaleString('en-US')} changes to ${ORDERING_RECORDS.toLocaleString('en-US')} records, ordering per_record | none`,
    ceiling: result.none.map((rate) => `${fmt(rate)}/s`).join(', '),
    service:
      `${result.perRecord.map((rate) => `${fmt(rate)}/s`).join(', ')}; ${result.outOfOrder} out of a record's commit order, ` +
      `${result.lost} lost, ${result.duplicates} received twice`,
    ratio: ratio.toFixed(2),
    // At least once, as every delivery: a receiver de-duplicates on X-Webhook-ID (a copy sent again is counted, not failed).
    target: '≥ 0.9, in order, none lost',
    verdict: verdict(ratio >= 0.9 && result.outOfOrder === 0 && result.lost === 0),
  });
}

/**
 * Phase 19 (bench/transformations.ts, issue 63): deliveries a second to an endpoint with a typical transformation (20
 * fields remapped, a header) against one with none, on a backlog; one compiled evaluation's median time.
 */
async function transformations(servers: Servers, compiled: CompiledProject, dir: string): Promise<void> {
  const result = await transformationPhase(servers, compiled, dir, { events: TRANSFORMATION_EVENTS, rounds: TRANSFORMATION_ROUNDS, timeoutMs: 5 * 60_000, evaluations: 5000 });
  const mean = (rates: number[]) => rates.reduce((sum, rate) => sum + rate, 0) / rates.length;
  const ratio = mean(result.transformed) / mean(result.none);
  record({
    work: `19. Transformations: deliveries a second, a backlog of ${TRANSFORMATION_EVENTS.toLocaleString('en-US')} events, a typical transformation (20 fields, a header) | none`,
    ceiling: result.none.map((rate) => `${fmt(rate)}/s`).join(', '),
    service: `${result.transformed.map((rate) => `${fmt(rate)}/s`).join(', ')}; ${result.untransformed} not transformed, ${result.failed} failed, ${result.lost} lost`,
    ratio: ratio.toFixed(2),
    target: '≥ 0.9, every one transformed, none lost',
    verdict: verdict(ratio >= 0.9 && result.untransformed === 0 && result.failed === 0 && result.lost === 0),
  });
  record({
    work: `19a. One evaluation of the compiled typical transformation (${Object.keys(TYPICAL.headers ?? {}).length} header, compiled once per endpoint version)`,
    ceiling: '–',
    service: `median ${fmt(result.medianMicros)} µs, p99 ${fmt(result.p99Micros)} µs`,
    ratio: '–',
    target: '',
    verdict: '',
  });
}

/**
 * Phase 16 (bench/event-feeds.ts, issue 49): events written to 100 feeds and read back over HTTP, and a long poll's
 * commit → answer.
 */
async function eventFeeds(servers: Servers, compiled: CompiledProject, dir: string): Promise<void> {
  const settings = { feeds: 100, events: FEED_EVENTS, pollEvents: 40, timeoutMs: 10 * 60_000 };
  const result = await eventFeedPhase(servers, compiled, dir, settings);
  const owed = settings.feeds * settings.events;
  record({
    work: `16. Event feeds: ${settings.events.toLocaleString('en-US')} events committed at once to ${settings.feeds} feeds, written, then every feed read back over HTTP (pages of 1,000, 16 readers)`,
    ceiling: '–',
    service:
      `written ${fmt(settings.events / result.writeSeconds)} events/s (${fmt(result.entriesWritten / result.writeSeconds)} entries/s, ${result.entriesWritten} of ${owed} in ${fmt(result.writeSeconds)} s); ` +
      `read back ${fmt(result.entriesRead / result.readSeconds)} entries/s (${result.entriesRead} in ${fmt(result.readSeconds)} s); ${result.feedsOutOfOrder} feeds not holding every event once in commit order; worker peak ${fmt(result.workerRssMb)} MB`,
    ratio: '–',
    target: 'every entry written and read once, in commit order',
    verdict: verdict(result.entriesWritten === owed && result.entriesRead === owed && result.feedsOutOfOrder === 0),
  });
  record({
    work: `16a. Event feeds: a long poll's commit → answer (${settings.pollEvents} events, 250 ms apart)`,
    ceiling: '–',
    service: `${latency(result.poll)} (${result.pollAnswered} of ${settings.pollEvents} answered)`,
    ratio: '–',
    target: 'p99 ≤ 1,000 ms',
    verdict: verdict(result.poll.p99 <= 1000 && result.pollAnswered === settings.pollEvents),
  });
}

/**
 * `npm start` from nothing (initdb, migrations) to healthy, then its one process delivering (its RSS); in the full
 * run also again on its data, delivering, then serving phase 1's list.
 */
async function startupPhase(dir: string): Promise<void> {
  const dataDir = path.join(dir, 'npm-start');
  const ports = { api: await freePort(), postgres: await freePort(), temporal: await freePort(), ui: await freePort() };
  // The deliveries go to this process's receiver on the loopback, over HTTPS with the test certificate.
  const env = { WEBHOOK_ALLOW_LOOPBACK: 'true', NODE_EXTRA_CA_CERTS: testCertificate().certFile };
  const work = `\`npm start\`'s one process (API, worker, dispatcher) from its start, ${ONE_PROCESS_DELIVERY_RATE} deliveries/s for ${ONE_PROCESS_DELIVERY_SECONDS} s once it delivers`;
  const first = await npmStart(dataDir, ports, env);
  let firstRun: { peak: number; text: string };
  try {
    ({ run: firstRun } = await oneProcessDeliveries(first, dataDir, ports.api, 'One Process', { keys: 5, projects: 1 }));
  } finally {
    await first.stop();
  }
  if (QUICK) {
    record({ work: '`npm start` to healthy (fresh data folder)', ceiling: '–', service: `${first.seconds.toFixed(1)} s`, ratio: '–', target: '≤ 15 s', verdict: verdict(first.seconds <= 15) });
    recordPeakRss(`RSS: ${work}`, firstRun.peak, ONE_PROCESS_RSS_BUDGET_MB, firstRun.text);
    return;
  }
  const again = await npmStart(dataDir, ports, env);
  try {
    record({
      work: '`npm start` to healthy (fresh data folder; restart)',
      ceiling: '–',
      service: `${first.seconds.toFixed(1)} s; ${again.seconds.toFixed(1)} s`,
      ratio: '–',
      target: '≤ 15 s',
      verdict: verdict(Math.max(first.seconds, again.seconds) <= 15),
    });
    const { run: againRun, tenant } = await oneProcessDeliveries(again, dataDir, ports.api, 'One Process Again', { keys: KEYS, projects: 200 });
    recordPeakRss(`RSS: ${work} (fresh data folder; restart)`, Math.max(firstRun.peak, againRun.peak), ONE_PROCESS_RSS_BUDGET_MB, `${firstRun.text}; ${againRun.text}`);
    // The same list as phase 1, served by `npm start`'s single process (API, worker and dispatcher together).
    const keyOf = rotation(tenant);
    const result = await load({ url: `http://127.0.0.1:${ports.api}/api/v1/projects?limit=50`, seconds: SECONDS, connections: CONNECTIONS, next: () => ({ headers: { 'X-API-Key': keyOf() } }) });
    console.log(`REST list served by npm start's one process: ${describe(result)}\n`);
    oneProcessList = result;
  } finally {
    await again.stop();
  }
}

/**
 * A company seeded in `npm start`'s database, its endpoint at a receiver here, and ONE_PROCESS_DELIVERY_RATE events a
 * second for it: the process's peak RSS since its start, and how the deliveries went. The database connections
 * close before `npm start` stops its PostgreSQL.
 */
async function oneProcessDeliveries(
  service: StartedService,
  dataDir: string,
  apiPort: number,
  name: string,
  seeding: { keys: number; projects: number },
): Promise<{ run: { peak: number; text: string }; tenant: Tenant }> {
  const url = runningEmbeddedPostgresUrl(dataDir, 'construction')!;
  const orm = await connectOrm(url, 4);
  const db = new Pool({ connectionString: url, max: 4 });
  const receiver = await startReceiver();
  try {
    const tenant = await seedTenant(orm, parseEncryptionKey(localEncryptionKey(dataDir)), name, seeding);
    const { probe } = await probeDeliveriesOf(db, `http://127.0.0.1:${apiPort}`, tenant, receiver);
    // Healthy is the API; the worker may still be bundling the workflow code: the load begins once it delivers.
    await probe.single(120_000);
    const deliveries = await probe.run(ONE_PROCESS_DELIVERY_RATE, ONE_PROCESS_DELIVERY_SECONDS);
    const peak = service.peakRssMb();
    return { run: { peak, text: `${fmt(peak)} MB peak; ${deliveries.received} of ${deliveries.sent} delivered, ${latency(deliveries.latency)}` }, tenant };
  } finally {
    await receiver.close();
    await db.end();
    await orm.close();
  }
}

let oneProcessList: LoadResult | null = null;

/**
 * Phases 1 to 5: the ceiling, then the service, each loaded the same way. Besides throughput and latency, the
 * CPU time the serving process spent per request served: the figure least moved by other load on the machine.
 */
async function requestPhases(target: { url: string; proc: NodeProcess }, ceilingServer: { url: string; proc: NodeProcess }, tenant: Tenant, keyOf: () => string): Promise<void> {
  const service = target.url;
  const bare = ceilingServer.url;
  const run = (url: string, next: () => { path?: string; headers?: Record<string, string>; body?: string }, method: 'GET' | 'POST' = 'GET', seconds = SECONDS) =>
    load({ url, method, seconds, connections: CONNECTIONS, next });
  const withCpu = async (proc: NodeProcess, work: () => Promise<LoadResult>) => {
    const before = proc.cpuSeconds();
    const result = await work();
    const perRequest = (1000 * (proc.cpuSeconds() - before)) / Math.max(1, result.served);
    return `${describe(result)}, ${perRequest.toFixed(2)} ms CPU/request`;
  };
  const compare = async (work: string, goal: number | null, ceilingRun: () => Promise<LoadResult>, serviceRun: () => Promise<LoadResult>) => {
    let c!: LoadResult;
    let s!: LoadResult;
    const ceilingText = await withCpu(ceilingServer.proc, async () => (c = await ceilingRun()));
    const serviceText = await withCpu(target.proc, () => profiled(work, async () => (s = await serviceRun())));
    const ratio = s.rps / c.rps;
    record({ work, ceiling: ceilingText, service: serviceText, ratio: ratio.toFixed(2), target: goal === null ? '–' : `≥ ${goal}`, verdict: goal === null ? '' : verdict(ratio >= goal) });
    return s;
  };
  const json = { 'Content-Type': 'application/json' };
  let n = 0;

  await compare(
    'HTTP alone: bare Koa JSON; the service answering 401 to a request without a key',
    null,
    () => run(`${bare}/json`, () => ({})),
    async () => {
      const refused = await run(`${service}/api/v1/projects`, () => ({}));
      return { ...refused, served: refused.answered, rps: refused.answered / refused.seconds, non2xx: 0 };
    },
  );
  const list = await compare(
    '1. REST list: GET /projects?limit=50 (of 200) | bare Koa + pg, the page and its total in one query',
    0.6,
    () => run(`${bare}/projects?company=${tenant.companyId}&limit=50`, () => ({})),
    () => run(`${service}/api/v1/projects?limit=50`, () => ({ headers: { 'X-API-Key': keyOf() } })),
  );
  if (oneProcessList) {
    record({
      work: '1b. REST list served by `npm start` (API, worker, dispatcher in one process) | phase 1 on separate processes',
      ceiling: describe(list),
      service: describe(oneProcessList),
      ratio: (oneProcessList.rps / list.rps).toFixed(2),
      target: '–',
      verdict: '',
    });
  }
  const projectId = () => tenant.projectIds[n++ % tenant.projectIds.length]!;
  await compare(
    '2. REST get: GET /projects/{id} | bare Koa + pg, one row',
    0.6,
    () => run(`${bare}/projects`, () => ({ path: `/projects/${projectId()}?company=${tenant.companyId}` })),
    () => run(`${service}/api/v1/projects`, () => ({ path: `/api/v1/projects/${projectId()}`, headers: { 'X-API-Key': keyOf() } })),
  );
  const bareCreate = () => run(`${bare}/customers`, () => ({ headers: json, body: JSON.stringify({ company_id: tenant.companyId, name: `Ceiling ${n++}` }) }), 'POST');
  await compare(
    '3. REST create: POST /customers | bare Koa + pg, one transaction of 2 inserts (record, outbox event)',
    null,
    bareCreate,
    () => run(`${service}/api/v1/customers`, () => ({ headers: { ...json, 'X-API-Key': keyOf() }, body: JSON.stringify({ name: `Rest ${n++}` }) }), 'POST'),
  );
  const signed = (eventType: string, data: Record<string, unknown>) => {
    const key = tenant.keys[n % tenant.keys.length]!;
    const body = JSON.stringify({ event_type: eventType, timestamp: new Date().toISOString(), source: 'bench', data });
    const timestamp = String(Math.floor(Date.now() / 1000));
    return { headers: { ...json, 'X-API-Key': key.key, 'X-Webhook-Timestamp': timestamp, 'X-Webhook-Signature': signWebhook(key.signingSecret, timestamp, body) }, body };
  };
  await compare(
    '4. Inbound simple create: signed customer.created | the same 2-insert transaction',
    0.5,
    bareCreate,
    () => run(`${service}/webhooks/inbound`, () => signed('customer.created', { name: `Inbound ${n++}` }), 'POST'),
  );
  // A workflow answers in seconds under load: a longer phase, so that enough of them finish inside it.
  const workflowSeconds = Math.max(SECONDS, QUICK ? 6 : 10);
  await compare(
    '5. Inbound project.created (a workflow) | bare Koa + Temporal, a workflow of one no-op activity',
    null,
    () => run(`${bare}/workflows`, () => ({}), 'POST', workflowSeconds),
    () =>
      run(
        `${service}/webhooks/inbound`,
        () => signed('project.created', { project_code: `W-${n}`, project_name: `Workflow ${n}`, customer_name: `Workflow customer ${n % 50}`, location_name: `Site ${n++}` }),
        'POST',
        workflowSeconds,
      ),
  );
}

/**
 * Deliveries per second until the latency bends (offered rates rising as fractions of the ceiling, each step
 * drained before the next), then commit → receipt latency at half the sustained rate.
 */
async function deliveryPhase(db: Pool, temporal: TemporalClient, noopQueue: string, probe: DeliveryProbe): Promise<void> {
  const measured = await sustainedDeliveryRate(temporal, noopQueue, probe, {
    ceilingSeconds: Math.max(SECONDS, 5),
    stepSeconds: QUICK ? 3 : 10,
    around: profiled,
    cpuSeconds: devServerCpu,
  });
  devServerDeliveries = measured;
  const { ceiling, sustained, steps } = measured;
  const ratio = sustained / ceiling;
  record({
    work: `6. Deliveries sustained until latency bends (${steps.join('; ')}) | no-op workflows, 50 in flight`,
    ceiling: `${fmt(ceiling)}/s`,
    service: `${fmt(sustained)}/s`,
    ratio: ratio.toFixed(2),
    target: '≥ 1.0',
    verdict: verdict(ratio >= 1),
  });
  const half = Math.max(sustained, ceiling * 0.25) / 2;
  const halfSeconds = QUICK ? 6 : 30;
  const steady = await profiled(`6. deliveries at half rate ${fmt(half)}/s`, () => probe.run(half, halfSeconds));
  record({
    work: `6b. Commit → receipt at half that rate (${fmt(half)}/s for ${halfSeconds} s)`,
    ceiling: '–',
    service: latency(steady.latency),
    ratio: '–',
    target: 'p50 ≤ 25 ms, p99 ≤ 150 ms',
    verdict: verdict(steady.latency.p50 <= 25 && steady.latency.p99 <= 150),
  });
  const tally = probe.tally();
  record({
    work: '6c. Every delivery counted',
    ceiling: '–',
    service: `${tally.sent} committed, ${tally.lost} lost, ${tally.duplicates} received twice (absorbed by X-Webhook-ID)`,
    ratio: '–',
    target: '0 lost',
    verdict: verdict(tally.lost === 0),
  });
  // Where one delivery's time goes, with nothing else in flight.
  const timelines: Timeline[] = [];
  for (let i = 0; i < (QUICK ? 5 : 20); i++) timelines.push(await timelineOf(db, temporal, await probe.single()));
  const median = medianTimeline(timelines);
  record({
    work: `6f. One delivery at a time, median of ${timelines.length}, ms after the event's commit: ${TIMELINE_STEPS.map(([step, what]) => `${fmt(median[step])} ${what}`).join('; ')}`,
    ceiling: '–',
    service: `${fmt(median.received)} ms to receipt`,
    ratio: '–',
    target: '(reported)',
    verdict: '',
  });
}

/** What parts of a delivery's workflow shape cost on this server (bench/temporal-variants.ts): measured proposals. */
async function workflowShapePhase(script: string, temporalAddress: string, logDir: string): Promise<void> {
  const variants = startNode('temporal-variants', script, { TEMPORAL_ADDRESS: temporalAddress, VARIANT_SECONDS: String(SECONDS), SERVER_PIDS: devServerPids().join(',') }, { logDir });
  await new Promise((resolve) => variants.child.once('exit', resolve));
  const lines = variants
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{"variant"'))
    .map((line) => JSON.parse(line) as { variant: string; perSecond: number; alone: { p50: number; p99: number; max: number }; serverCpuMs: number | null });
  if (lines.length === 0) throw new Error(`temporal-variants printed nothing:\n${variants.output()}`);
  for (const line of lines) {
    record({
      work: `6d. Workflow shape: ${line.variant}`,
      ceiling: `${fmt(lines[0]!.perSecond)}/s`,
      service: `${fmt(line.perSecond)}/s with 50 in flight${line.serverCpuMs === null ? '' : `, ${line.serverCpuMs.toFixed(1)} ms dev server CPU/workflow`}; one at a time ${latency(line.alone)}`,
      ratio: (line.perSecond / lines[0]!.perSecond).toFixed(2),
      target: '–',
      verdict: '',
    });
  }
}

/** One tenant with 10 k, 100 k and 1 M work orders: a page of 100 at the start and 50,000 deep, against raw SQL. */
async function scalePhase(db: Pool, service: string, tenant: Tenant): Promise<void> {
  const keyOf = rotation(tenant);
  let seeded = 0;
  for (const size of SCALE_ROWS) {
    const started = Date.now();
    await seedWorkOrders(db, tenant.companyId, tenant.projectIds[0]!, seeded, size);
    seeded = size;
    // What autovacuum does for an insert-only table; the index-only scans of deep pages rely on it.
    await db.query('vacuum analyze work_orders');
    console.log(`Seeded ${size.toLocaleString('en-US')} work orders (${((Date.now() - started) / 1000).toFixed(0)} s).`);
    // By offset at the start and 50,000 deep, and by cursor at the end of the list (the page holding its last record).
    const end = await positionAt(db, service, keyOf, tenant.companyId, size - 101);
    const pages = [
      { label: `offset=${(0).toLocaleString('en-US')}`, offset: 0 },
      { label: `offset=${Math.min(50_000, size - 100).toLocaleString('en-US')}`, offset: Math.min(50_000, size - 100) },
      { label: `after=<cursor at row ${(size - 100).toLocaleString('en-US')}>`, offset: 0, after: end },
    ];
    for (const { label, offset, after } of pages) {
      const page = await profiled(`7. ${size} rows ${label}`, () =>
        measurePage({ db, apiUrl: service, key: keyOf, companyId: tenant.companyId, rows: size, offset, after, samples: QUICK ? 30 : 200 }),
      );
      record({
        work: `7. ${size.toLocaleString('en-US')} work orders, GET /work-orders?limit=100&${label} | raw SQL of the page, no total`,
        ceiling: latency(page.raw),
        service: latency(page.service),
        ratio: `${(page.service.p99 / page.raw.p99).toFixed(2)} (p99)`,
        target: 'p99 ≤ 20 ms',
        verdict: verdict(page.service.p99 <= 20),
      });
    }
  }
}

/** Dispatch and the delivery list with no history, with OLD_DELIVERIES old deliveries, and after retention deleted them. */
async function historyPhase(
  db: Pool,
  temporal: TemporalClient,
  taskQueues: TaskQueues,
  service: string,
  keyOf: () => string,
  companyId: string,
  endpointId: string,
  probe: DeliveryProbe,
): Promise<void> {
  const measure = async (label: string) => {
    const dispatch = await profiled(`8. dispatch, ${label}`, () => probe.run(5, QUICK ? 3 : 6));
    const list = await profiled(`8. delivery list, ${label}`, () => deliveryListLatency(service, keyOf, QUICK ? 30 : 100));
    return { dispatch: dispatch.latency, list };
  };
  const fresh = await measure('no history');
  // The schedule's own runs (every RETENTION_EVERY_MINUTES, aligned to the clock) would prune part of the history
  // while it is seeded and measured; paused, it runs only when runRetention triggers it.
  await temporal.schedule.getHandle(retentionScheduleId(taskQueues)).pause('the benchmark triggers retention itself');
  const started = Date.now();
  await seedOldDeliveries(db, companyId, endpointId, OLD_DELIVERIES);
  console.log(`Seeded ${OLD_DELIVERIES.toLocaleString('en-US')} old deliveries with their attempts (${((Date.now() - started) / 1000).toFixed(0)} s).`);
  const old = await measure(`${OLD_DELIVERIES} old deliveries`);
  // The list stays served while retention deletes: sample it meanwhile.
  const during: number[] = [];
  let pruning = true;
  const sampler = (async () => {
    while (pruning) {
      during.push((await deliveryListLatency(service, keyOf, 1)).max);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  const pruned = await runRetention(temporal, taskQueues);
  pruning = false;
  await sampler;
  const after = await measure('after retention');
  const flat = (a: number, b: number) => b <= Math.max(2 * a, a + 20);
  const row = (what: string, key: 'dispatch' | 'list') =>
    record({
      work: `8. ${what}: no history | with ${OLD_DELIVERIES.toLocaleString('en-US')} old deliveries; after retention`,
      ceiling: latency(fresh[key]),
      service: `${latency(old[key])}; ${latency(after[key])}`,
      ratio: `${(old[key].p50 / fresh[key].p50).toFixed(2)} (p50)`,
      target: 'flat (≤ 2 × or +20 ms)',
      verdict: verdict(flat(fresh[key].p50, old[key].p50) && flat(fresh[key].p50, after[key].p50)),
    });
  row('Dispatch, commit → receipt', 'dispatch');
  row('GET /webhook-deliveries?limit=50', 'list');
  const sortedDuring = [...during].sort((a, b) => a - b);
  record({
    work: `8b. Retention run: ${Object.entries(pruned.deleted).map(([k, v]) => `${k} ${v.toLocaleString('en-US')}`).join(', ')}`,
    ceiling: '–',
    service: `${pruned.seconds.toFixed(0)} s; delivery list meanwhile p50 ${fmt(sortedDuring[Math.floor(sortedDuring.length / 2)] ?? NaN)} / max ${fmt(sortedDuring.at(-1) ?? NaN)} ms`,
    ratio: '–',
    target: 'every old delivery deleted',
    verdict: verdict(pruned.deleted.deliveries === OLD_DELIVERIES),
  });
}

function printTable(): void {
  console.log(`\n| Work | Ceiling | Service | Ratio | Target | |\n|---|---|---|---|---|---|`);
  // A work's label names its ceiling after " | ", which would be a column of its own in the table.
  for (const r of rows) console.log(`| ${r.work.replaceAll(' | ', ' / ')} | ${r.ceiling} | ${r.service} | ${r.ratio} | ${r.target} | ${r.verdict} |`);
  const failed = rows.filter((r) => r.verdict === 'FAIL').length;
  console.log(`\n${rows.filter((r) => r.verdict === 'PASS').length} PASS, ${failed} FAIL.`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
