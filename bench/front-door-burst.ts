import { Client as TemporalClient, Connection } from '@temporalio/client';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { Pool } from 'pg';
import { parseEncryptionKey } from '../src/config';
import { connectOrm } from '../src/database';
import { startReceiver, testCertificate, type TestReceiver } from '../test/helpers/https-receiver';
import { freePort } from '../test/helpers/ports';
import { COMPANY_ID } from '../workflows/search-attributes';
import { deliveryWorkflowId } from '../workflows/webhook-delivery.contract';
import { summary } from './http-load';
import { type Tenant, seedTenant } from './seed';
import { postSignedEmployee, subscribeToEmployeeCreated } from './signed-inbound';
import { type CompiledProject, type NodeProcess, phaseEnv, type Servers, startNode, waitForHttp, waitForOutput } from './stack';

/**
 * The burst users send (issue 60): an ERP's nightly sync or a field app back online posts signed inbound requests
 * through the front door, each a change that becomes a delivery while the next requests are still arriving. `senders`
 * concurrent senders post `requests` signed employee.created requests over `keys` API keys (so that no key's rate
 * limit refuses any), to a company with one endpoint subscribed, whose HTTPS receiver on loopback answers 200 at once;
 * then the same burst to a company with no endpoint: the front door alone.
 *
 * Measured from the first request to the last receipt: deliveries a second, and the CPU each process spent per delivered
 * message (the api and the worker: the service; the Temporal server; PostgreSQL; the whole machine without this driver,
 * which also runs the receiver). And what an operator sees in the Temporal UI: runs that failed, runs whose first
 * workflow task failed (a failed task runs its first attempt's local activity again), first attempts received twice.
 */
export interface BurstResult {
  requests: number;
  accepted: number;
  /** Answers that were not 202, by status. */
  refused: Record<string, number>;
  /** From the first request sent to the last answer. */
  frontDoorSeconds: number;
  /** From the first request sent to the last receipt; the front door's when nothing is delivered. */
  seconds: number;
  delivered: number;
  receivedTwice: number;
  firstAttemptsTwice: number;
  runsFailed: number;
  firstTasksFailed: number;
  /** Histories read for runsFailed and firstTasksFailed (every run's, unless there were too many). */
  historiesRead: number;
  /** CPU ms per delivered message (per accepted request without an endpoint), by process, and the machine without the driver. */
  cpuMsPer: Record<string, number>;
  /** Commit (the answer to its request) → receipt of each delivered message. */
  latency: { p50: number; p99: number; max: number } | null;
}

export interface BurstSettings {
  requests: number;
  senders: number;
  keys: number;
  /** The Temporal server's and PostgreSQL's CPU seconds so far, by part. */
  serverCpu: () => Record<string, number>;
  /** Wraps each measured burst (the CPU profile's window). */
  around?: <T>(label: string, work: () => Promise<T>) => Promise<T>;
}

/** Busy jiffies of the whole machine (/proc/stat), in seconds. */
function machineBusySeconds(): number {
  const ticks = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  return (ticks.reduce((sum, n) => sum + n, 0) - ticks[3]! - ticks[4]!) / 100;
}

/** This process's CPU seconds: the driver (senders, signing, the receiver), left out of the machine's figure. */
const driverCpuSeconds = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
};

export async function frontDoorBurstPhase(servers: Servers, compiled: CompiledProject, logDir: string, settings: BurstSettings): Promise<{ withEndpoint: BurstResult; frontDoorAlone: BurstResult }> {
  const env = { ...phaseEnv(servers, 'front-door-burst'), WEBHOOK_ALLOW_LOOPBACK: 'true' };
  const processes: NodeProcess[] = [];
  const orm = await connectOrm(servers.databaseUrl, 2);
  const db = new Pool({ connectionString: servers.databaseUrl, max: 2 });
  let receiver: TestReceiver | null = null;
  let temporal: TemporalClient | null = null;
  try {
    const worker = startNode(
      'front-door-burst-worker',
      compiled.entry('src/worker/main.ts'),
      { ...env, NODE_EXTRA_CA_CERTS: testCertificate().certFile, WORKER_METRICS_PORT: '0' },
      { logDir, as: 'start:worker' },
    );
    processes.push(worker);
    const apiPort = await freePort();
    const api = startNode('front-door-burst-api', compiled.entry('src/api/main.ts'), { ...env, PORT: String(apiPort), HOST: '127.0.0.1' }, { logDir, as: 'start:api' });
    processes.push(api);
    const key = parseEncryptionKey(env.ENCRYPTION_KEY);
    // One key more than the burst's: the endpoint's, whose own changes echo prevention would leave out.
    const subscribed = await seedTenant(orm, key, 'Front door burst', { keys: settings.keys + 1, projects: 0 });
    const alone = await seedTenant(orm, key, 'Front door alone', { keys: settings.keys, projects: 0 });
    await Promise.all([waitForHttp(`http://127.0.0.1:${apiPort}/health`, api), waitForOutput(worker, 'worker running')]);
    receiver = await startReceiver();
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    await subscribeToEmployeeCreated(apiUrl, subscribed.keys[settings.keys]!.key, receiver.url);
    temporal = new TemporalClient({ connection: await Connection.connect({ address: servers.temporalAddress }) });
    const around = settings.around ?? ((_label, work) => work());
    const measure = { api, worker, db, temporal: temporal, receiver, apiUrl, settings };
    // Warmed up first: the first requests and runs compile the processes' code paths and open their connections.
    await burst(measure, subscribed, 'warm-up', Math.min(100, settings.requests));
    await burst(measure, alone, 'warm-up', Math.min(100, settings.requests));
    const frontDoorAlone = await around('front door alone', () => burst(measure, alone, 'alone', settings.requests));
    const withEndpoint = await around('front door burst', () => burst(measure, subscribed, 'burst', settings.requests));
    return { withEndpoint, frontDoorAlone };
  } finally {
    await temporal?.connection.close();
    await receiver?.close();
    await db.end();
    await orm.close();
    for (const proc of processes.reverse()) await proc.stop();
  }
}

interface Measure {
  api: NodeProcess;
  worker: NodeProcess;
  db: Pool;
  temporal: TemporalClient;
  receiver: TestReceiver;
  apiUrl: string;
  settings: BurstSettings;
}

/** One burst of signed employee.created requests from `tenant`'s keys, measured until its deliveries (if any) have closed. */
async function burst(measure: Measure, tenant: Tenant, label: string, requests: number): Promise<BurstResult> {
  const { api, worker, db, receiver, settings } = measure;
  const [{ count: endpoints }] = (await db.query<{ count: string }>(`select count(*) from webhook_endpoints where company_id = $1 and status = 'active'`, [tenant.companyId])).rows as [
    { count: string },
  ];
  const delivering = Number(endpoints) > 0;
  const receiptsBefore = receiver.requests.length;
  const committedAt = new Map<string, number>();
  const before = { api: api.cpuSeconds(), worker: worker.cpuSeconds(), servers: settings.serverCpu(), machine: machineBusySeconds(), driver: driverCpuSeconds() };
  const started = Date.now();
  const refused: Record<string, number> = {};
  let next = 0;
  const tag = `${label}-${started}`;
  await Promise.all(
    Array.from({ length: settings.senders }, async () => {
      while (next < requests) {
        const n = next++;
        const key = tenant.keys[n % settings.keys]!;
        const empNumber = `${tag}-${n}`;
        const status = await postSignedEmployee(measure.apiUrl, key, empNumber, 'bench');
        if (status === 202 || status === 200 || status === 201) committedAt.set(empNumber, Date.now());
        else refused[status] = (refused[status] ?? 0) + 1;
      }
    }),
  );
  const frontDoorSeconds = (Date.now() - started) / 1000;
  let lastReceipt = Date.now();
  let deliveryIds: string[] = [];
  if (delivering) {
    deliveryIds = await deliveriesClosed(db, tenant.companyId, started, committedAt.size);
    lastReceipt = Math.max(...receiver.requests.slice(receiptsBefore).map((r) => r.receivedAt));
  } else {
    await outboxDispatched(db, tenant.companyId);
  }
  const after = { api: api.cpuSeconds(), worker: worker.cpuSeconds(), servers: settings.serverCpu(), machine: machineBusySeconds(), driver: driverCpuSeconds() };
  const receipts = receiver.requests.slice(receiptsBefore);
  const byWebhookId = new Map<string, number>();
  const firstAttempts = new Map<string, number>();
  const receivedAt = new Map<string, number>();
  for (const receipt of receipts) {
    const id = String(receipt.headers['x-webhook-id']);
    byWebhookId.set(id, (byWebhookId.get(id) ?? 0) + 1);
    if (String(receipt.headers['x-webhook-retry']) === '0') firstAttempts.set(id, (firstAttempts.get(id) ?? 0) + 1);
    const empNumber = (JSON.parse(receipt.body) as { data?: { emp_number?: string } }).data?.emp_number;
    if (empNumber && !receivedAt.has(empNumber)) receivedAt.set(empNumber, receipt.receivedAt);
  }
  const delivered = byWebhookId.size;
  const per = Math.max(1, delivering ? delivered : committedAt.size);
  const cpuMsPer: Record<string, number> = {
    service: (1000 * (after.api - before.api + after.worker - before.worker)) / per,
    api: (1000 * (after.api - before.api)) / per,
    worker: (1000 * (after.worker - before.worker)) / per,
  };
  for (const [part, seconds] of Object.entries(after.servers)) cpuMsPer[part] = (1000 * (seconds - (before.servers[part] ?? 0))) / per;
  cpuMsPer.machine = (1000 * (after.machine - before.machine - (after.driver - before.driver))) / per;
  const history = delivering ? await runHistories(measure.temporal, tenant.companyId, deliveryIds) : { failed: 0, firstTasksFailed: 0, read: 0 };
  const latencies = [...receivedAt].filter(([emp]) => committedAt.has(emp)).map(([emp, at]) => at - committedAt.get(emp)!);
  return {
    requests,
    accepted: committedAt.size,
    refused,
    frontDoorSeconds,
    seconds: ((delivering ? lastReceipt : Date.now()) - started) / 1000,
    delivered,
    receivedTwice: [...byWebhookId.values()].filter((n) => n > 1).length,
    firstAttemptsTwice: [...firstAttempts.values()].filter((n) => n > 1).length,
    runsFailed: history.failed,
    firstTasksFailed: history.firstTasksFailed,
    historiesRead: history.read,
    cpuMsPer,
    latency: latencies.length ? summary(latencies) : null,
  };
}

/** Waits until the company's deliveries of the burst (`expected` of them) are written and none is open; returns their ids. */
async function deliveriesClosed(db: Pool, companyId: string, since: number, expected: number, timeoutMs = 300_000): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await db.query<{ id: string; status: string }>(`select id, status from webhook_deliveries where company_id = $1 and created_at >= to_timestamp($2 / 1000.0)`, [
      companyId,
      since,
    ]);
    const open = rows.filter((row) => row.status === 'pending' || row.status === 'retrying').length;
    if ((rows.length >= expected && open === 0) || Date.now() > deadline) {
      if (open > 0 || rows.length < expected) console.log(`Front door burst: ${rows.length} of ${expected} deliveries written, ${open} still open after ${timeoutMs / 1000} s`);
      // The runs' last workflow tasks close them after their deliveries are recorded.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      return rows.map((row) => row.id);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits until every event of the company has been dispatched. */
async function outboxDispatched(db: Pool, companyId: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const [row] = (await db.query<{ open: string }>(`select count(*) as open from outbox_events where company_id = $1 and dispatched_at is null`, [companyId])).rows;
    if (Number(row!.open) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * What the Temporal UI shows of the burst's runs: how many failed (visibility), and how many had a first workflow task
 * that failed (their histories: a WorkflowTaskFailed before the first WorkflowTaskCompleted).
 */
async function runHistories(temporal: TemporalClient, companyId: string, deliveryIds: string[]): Promise<{ failed: number; firstTasksFailed: number; read: number }> {
  const { count: failed } = await temporal.workflow.count(`${COMPANY_ID.name} = '${companyId}' AND ExecutionStatus = 'Failed'`);
  let firstTasksFailed = 0;
  let read = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(8, os.cpus().length * 4) }, async () => {
      while (next < deliveryIds.length) {
        const id = deliveryIds[next++]!;
        const history = await temporal.workflow.getHandle(deliveryWorkflowId(id)).fetchHistory();
        read += 1;
        for (const event of history.events ?? []) {
          if (event.workflowTaskCompletedEventAttributes) break;
          if (event.workflowTaskFailedEventAttributes) {
            firstTasksFailed += 1;
            break;
          }
        }
      }
    }),
  );
  return { failed, firstTasksFailed, read };
}

const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1));

/** One line of a burst's figures, for the phase's log and its rows. */
export function describeBurst(result: BurstResult): string {
  const cpu = Object.entries(result.cpuMsPer)
    .map(([part, ms]) => `${part} ${ms.toFixed(1)}`)
    .join(', ');
  const refused = Object.entries(result.refused).map(([status, n]) => `${n} × ${status}`);
  return (
    `${result.accepted} of ${result.requests} accepted in ${result.frontDoorSeconds.toFixed(1)} s (${fmt(result.accepted / result.frontDoorSeconds)}/s)${refused.length ? `, refused ${refused.join(', ')}` : ''}; ` +
    (result.delivered ? `${result.delivered} delivered in ${result.seconds.toFixed(1)} s (${fmt(result.delivered / result.seconds)}/s), commit → receipt ${result.latency ? `p50 ${fmt(result.latency.p50)} / p99 ${fmt(result.latency.p99)} ms` : '–'}; ` : '') +
    `CPU ms per ${result.delivered ? 'delivered message' : 'accepted request'}: ${cpu}`
  );
}
