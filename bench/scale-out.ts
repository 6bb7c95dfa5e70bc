import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { Pool } from 'pg';
import { parseEncryptionKey } from '../src/config';
import { connectOrm } from '../src/database';
import { startReceiver, testCertificate, type TestReceiver } from '../test/helpers/https-receiver';
import { freePort } from '../test/helpers/ports';
import { probeDeliveriesOf } from './deliveries';
import { load, type LoadResult } from './http-load';
import { rotation, seedTenant } from './seed';
import { procStat } from './proc';
import { type CompiledProject, type NodeProcess, phaseEnv, type Servers, startNode, waitForHttp, waitForOutput } from './stack';

/**
 * The scale-out benchmark: what a second worker process and a second api process add on this machine. Replicas share
 * the work through PostgreSQL and Temporal (the outbox is claimed FOR UPDATE SKIP LOCKED, the task queues are polled by
 * every worker, rate limits live in PostgreSQL), so a second process of either role adds capacity where there is CPU
 * for it; on 2 cores shared with PostgreSQL, the Temporal dev server and the load driver, there is little.
 *
 * - Deliveries: events committed to one company's outbox faster than the workers take them up (`offeredPerSecond` for
 *   `seconds`), each delivered to one endpoint (its cap on attempts in flight raised out of the way) at the same receiver (this process), so that a backlog waits
 *   throughout: deliveries received a second, from the first commit to the last receipt, is what the workers sustain.
 *   With one worker process, then with a second one started beside it (same task queues; each runs its dispatcher).
 * - REST list: phase 1's `GET /projects?limit=50` (of 200) under `connections` closed-loop connections, all on one api
 *   process; then split in two halves, one autocannon instance of `connections / 2` on each of two api processes, run
 *   at the same time; their requests a second added up.
 *
 * Each delivery run is preceded by a short one, and the list by a short load on each api: the second process is not
 * measured cold. The processes' CPU is read from /proc for each measurement, beside the whole machine's, to show where
 * the cores went.
 */
export interface ScaleOutSettings {
  seconds: number;
  connections: number;
  keys: number;
  /** Events committed a second in the delivery runs: above what two workers take up on this machine. */
  offeredPerSecond: number;
  /** Bound of the wait for each delivery run's backlog to drain. */
  drainMs: number;
}

/** Where the machine's CPU went during a measurement, in cores busy on average (CPU seconds per second). */
export interface CpuShare {
  seconds: number;
  /** Every core's busy time (/proc/stat: all but idle and iowait), as cores. */
  machine: number;
  /** The measured processes (the workers, or the apis), each: whether the second one took its share. */
  services: number[];
  /** This run's other processes: PostgreSQL and the Temporal dev server when embedded, and any other process of the run. */
  servers: number;
  /** This process: the load driver (autocannon, or the outbox inserts) and the receiver. */
  driver: number;
  /** The machine's busy time not accounted for by this run's processes: anything else running (and processes that exited meanwhile). */
  outside: number;
}

export interface DeliveryRun {
  processes: number;
  sent: number;
  received: number;
  perSecond: number;
  /** A backlog waited throughout (received a second well below offered): else the figure is what was offered, not what the workers can do. */
  saturated: boolean;
  /** CPU time of the worker processes per delivery received. */
  cpuMsPerDelivery: number;
  cpu: CpuShare;
}

export interface ListRun {
  processes: number;
  /** One load result per api process, each with its share of the connections. */
  parts: LoadResult[];
  perSecond: number;
  /** CPU time of the api processes per request served. */
  cpuMsPerRequest: number;
  cpu: CpuShare;
}

export interface ScaleOutResult {
  deliveries: [DeliveryRun, DeliveryRun];
  list: [ListRun, ListRun];
}

/** Busy and total jiffies of all cores, from the first line of /proc/stat. */
function machineTicks(): { busy: number; total: number } {
  const [, ...values] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  // user nice system idle iowait irq softirq steal (guest time is counted in user already).
  const ticks = values.slice(0, 8).map(Number);
  const total = ticks.reduce((sum, n) => sum + n, 0);
  return { busy: total - ticks[3]! - ticks[4]!, total };
}

/** CPU seconds used so far by the descendants of this process (living ones), from /proc. */
function descendantsCpuSeconds(): number {
  const stats = new Map<number, { ppid: number; cpuSeconds: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(Number(entry));
    if (stat) stats.set(Number(entry), stat);
  }
  const children = new Map<number, number[]>();
  for (const [pid, { ppid }] of stats) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  let total = 0;
  const pending = [...(children.get(process.pid) ?? [])];
  while (pending.length) {
    const pid = pending.pop()!;
    total += stats.get(pid)!.cpuSeconds;
    pending.push(...(children.get(pid) ?? []));
  }
  return total;
}

/** Runs `work` and reports where the machine's CPU went meanwhile, `services` being the processes it measures. */
async function withCpu<T>(services: NodeProcess[], work: () => Promise<T>): Promise<{ result: T; cpu: CpuShare; servicesCpuSeconds: number }> {
  const servicesCpu = () => services.map((proc) => proc.cpuSeconds());
  const before = { at: performance.now(), machine: machineTicks(), services: servicesCpu(), tree: descendantsCpuSeconds(), driver: process.cpuUsage() };
  const result = await work();
  const seconds = (performance.now() - before.at) / 1000;
  const machineAfter = machineTicks();
  const eachService = servicesCpu().map((cpuSeconds, i) => cpuSeconds - before.services[i]!);
  const servicesCpuSeconds = eachService.reduce((sum, cpuSeconds) => sum + cpuSeconds, 0);
  const tree = descendantsCpuSeconds() - before.tree;
  const driverUsage = process.cpuUsage(before.driver);
  const driver = (driverUsage.user + driverUsage.system) / 1e6;
  // /proc/stat's first line adds up every core's jiffies: the share of them that was busy, times the cores.
  const machine = ((machineAfter.busy - before.machine.busy) / Math.max(1, machineAfter.total - before.machine.total)) * os.cpus().length;
  const perSecond = (cpuSeconds: number) => cpuSeconds / seconds;
  return {
    result,
    servicesCpuSeconds,
    cpu: {
      seconds,
      machine,
      services: eachService.map(perSecond),
      servers: perSecond(tree - servicesCpuSeconds),
      driver: perSecond(driver),
      outside: Math.max(0, machine - perSecond(tree + driver)),
    },
  };
}

export async function scaleOutPhase(servers: Servers, compiled: CompiledProject, logDir: string, settings: ScaleOutSettings): Promise<ScaleOutResult> {
  const common = {
    ...phaseEnv(servers, 'scale-out'),
    WEBHOOK_ALLOW_LOOPBACK: 'true',
    // The deliveries go to one endpoint, whose attempts in flight (4 by default, all workers together) would bound
    // one worker and two alike: the phase measures the workers.
    WEBHOOK_ENDPOINT_MAX_IN_FLIGHT: '64',
  };
  const processes: NodeProcess[] = [];
  const orm = await connectOrm(servers.databaseUrl, 4);
  const db = new Pool({ connectionString: servers.databaseUrl, max: 4 });
  let receiver: TestReceiver | null = null;
  try {
    const startWorker = (name: string) => {
      const worker = startNode(
        name,
        compiled.entry('src/worker/main.ts'),
        { ...common, NODE_EXTRA_CA_CERTS: testCertificate().certFile, WORKER_METRICS_PORT: '0' },
        { logDir, as: 'start:worker' },
      );
      processes.push(worker);
      return worker;
    };
    const startApi = async (name: string) => {
      const port = await freePort();
      const api = startNode(name, compiled.entry('src/api/main.ts'), { ...common, PORT: String(port), HOST: '127.0.0.1' }, { logDir, as: 'start:api' });
      processes.push(api);
      return { url: `http://127.0.0.1:${port}`, proc: api };
    };
    const workers = [startWorker('scale-out-worker-1')];
    const apis = [await startApi('scale-out-api-1'), await startApi('scale-out-api-2')];
    const key = parseEncryptionKey(common.ENCRYPTION_KEY);
    const listTenant = await seedTenant(orm, key, 'Scale-out List', { keys: settings.keys, projects: 200 });
    const deliveryTenant = await seedTenant(orm, key, 'Scale-out Deliveries', { keys: 1, projects: 0 });
    await Promise.all([...apis.map((api) => waitForHttp(`${api.url}/health`, api.proc)), waitForOutput(workers[0]!, 'worker running')]);

    // Deliveries: one endpoint at one receiver.
    receiver = await startReceiver();
    const { probe } = await probeDeliveriesOf(db, apis[0]!.url, deliveryTenant, receiver);
    const warmUpSeconds = Math.min(2, settings.seconds);
    const deliveryRun = async (): Promise<DeliveryRun> => {
      await probe.run(settings.offeredPerSecond, warmUpSeconds / 2, settings.drainMs);
      const { result, cpu, servicesCpuSeconds } = await withCpu(workers, () => probe.run(settings.offeredPerSecond, settings.seconds, settings.drainMs));
      const run = {
        processes: workers.length,
        sent: result.sent,
        received: result.received,
        perSecond: result.perSecond,
        saturated: result.perSecond < 0.9 * settings.offeredPerSecond,
        cpuMsPerDelivery: (1000 * servicesCpuSeconds) / Math.max(1, result.received),
        cpu,
      };
      console.log(`Scale-out, ${run.processes} worker process(es): ${run.perSecond.toFixed(1)} deliveries/s (${run.received} of ${run.sent}); ${describeCpu(cpu)}.`);
      return run;
    };
    const oneWorker = await deliveryRun();
    workers.push(startWorker('scale-out-worker-2'));
    await waitForOutput(workers[1]!, 'worker running');
    const twoWorkers = await deliveryRun();
    // The apis are measured alone: the workers' polling and dispatcher stay out of their figures.
    for (const worker of workers) await worker.stop();

    const keyOf = rotation(listTenant);
    const list = (api: { url: string }, connections: number, seconds: number) =>
      load({ url: `${api.url}/api/v1/projects?limit=50`, seconds, connections, next: () => ({ headers: { 'X-API-Key': keyOf() } }) });
    const listRun = async (serving: typeof apis): Promise<ListRun> => {
      const { result: parts, cpu, servicesCpuSeconds } = await withCpu(
        serving.map((api) => api.proc),
        () => Promise.all(serving.map((api) => list(api, Math.max(1, Math.floor(settings.connections / serving.length)), settings.seconds))),
      );
      const served = parts.reduce((sum, part) => sum + part.served, 0);
      const run = { processes: serving.length, parts, perSecond: parts.reduce((sum, part) => sum + part.rps, 0), cpuMsPerRequest: (1000 * servicesCpuSeconds) / Math.max(1, served), cpu };
      console.log(`Scale-out, ${run.processes} api process(es): ${run.perSecond.toFixed(0)} list requests/s; ${describeCpu(cpu)}.`);
      return run;
    };
    for (const api of apis) await list(api, settings.connections, warmUpSeconds);
    const oneApi = await listRun(apis.slice(0, 1));
    const twoApis = await listRun(apis);
    return { deliveries: [oneWorker, twoWorkers], list: [oneApi, twoApis] };
  } finally {
    await receiver?.close();
    await db.end();
    await orm.close();
    for (const proc of processes.reverse()) await proc.stop();
  }
}

/** Where the cores went, as printed in the rows: "machine 1.95 cores busy: measured processes 0.80 (0.41 + 0.39), …". */
export function describeCpu(cpu: CpuShare): string {
  const f = (cores: number) => cores.toFixed(2);
  const services = `${f(cpu.services.reduce((sum, cores) => sum + cores, 0))}${cpu.services.length > 1 ? ` (${cpu.services.map(f).join(' + ')})` : ''}`;
  return `machine ${f(cpu.machine)} cores busy: measured processes ${services}, PostgreSQL + Temporal ${f(cpu.servers)}, load driver ${f(cpu.driver)}, outside the run ${f(cpu.outside)}`;
}
