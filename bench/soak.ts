import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parseEncryptionKey } from '../src/config';
import { SecretBox } from '../src/crypto/secret-box';
import { connectOrm } from '../src/database';
import { runningEmbeddedPostgresUrl } from '../src/db/embedded-postgres';
import { createCompany, issueApiKey } from '../src/domain/accounts/api-keys-service';
import { INBOUND_SCOPE, WEBHOOKS_MANAGE_SCOPE } from '../src/domain/accounts/scopes';
import { LOCAL_DATA_DIR, LOCAL_DATABASE, localEncryptionKey } from '../src/local-environment';
import { PROJECT_ROOT } from '../src/paths';
import { testCertificate } from '../test/helpers/https-receiver';
import { summary } from './http-load';
import { procStat, proportionalMemoryMb } from './proc';
import { offerSignedEmployee, subscribeToEmployeeCreated } from './signed-inbound';
import { installTemporalServer, type PostgresTemporal, startPostgresTemporal, TEMPORAL_SERVER_VERSION } from './temporal-server';

/**
 * `npm run soak`: signed inbound records at a steady rate for a bounded time against a running service, each delivered
 * to a TLS receiver in this process (issue 61). Every window (5 minutes by default) it prints the deliveries received,
 * those received twice, commit → receipt p50 / p99 and the memory of each of the service's processes; at the end, after
 * the last deliveries have had time to arrive, the records never delivered (lost) per window.
 *
 * Without BASE_URL it starts `npm start` itself (embedded PostgreSQL and Temporal, or DATABASE_URL / TEMPORAL_ADDRESS)
 * with loopback endpoints allowed and the receiver's certificate trusted; with `--temporal postgres`, on the benchmark's
 * own Temporal server with PostgreSQL persistence (bench/temporal-server.ts, built with Go the first time) instead of
 * the dev server. With BASE_URL the service must run on this
 * machine with WEBHOOK_ALLOW_LOOPBACK=true and NODE_EXTRA_CA_CERTS set to the certificate the soak prints, and
 * SOAK_PIDS names the processes whose memory it reads. Either way it makes its own company and keys in the service's
 * database, as `npm run cli` does (DATABASE_URL and ENCRYPTION_KEY, else the local .data folder's).
 */

const { values: options } = parseArgs({
  options: {
    minutes: { type: 'string', default: '60' },
    rate: { type: 'string', default: '10' },
    window: { type: 'string', default: '5' },
    // How long the last records may take to arrive before they count as lost.
    drain: { type: 'string', default: '120' },
    // `postgres`: the service on the benchmark's own Temporal server with PostgreSQL persistence, as production runs it.
    temporal: { type: 'string', default: 'dev-server' },
  },
});
if (!['dev-server', 'postgres'].includes(options.temporal)) throw new Error(`--temporal takes dev-server or postgres (got ${options.temporal})`);
const MINUTES = positive('minutes', options.minutes);
const RATE = positive('rate', options.rate);
const WINDOW_MS = positive('window', options.window) * 60_000;
const DRAIN_MS = positive('drain', options.drain) * 1000;
const MEMORY_SAMPLE_MS = 5_000;

function positive(name: string, value: string): number {
  const n = Number(value);
  if (!(n > 0) || n > 100_000) throw new Error(`--${name} takes a positive number (got ${value})`);
  return n;
}

interface Sent {
  committedAt: number;
  window: number;
}

interface Received {
  firstAt: number;
  count: number;
}

/** An HTTPS receiver on loopback that answers 200 at once and keeps only what the figures need. */
async function startReceiver(received: Map<string, Received>, webhookIds: Map<string, number>): Promise<{ server: Server; url: string }> {
  const { key, cert } = testCertificate();
  const server = createServer({ key, cert }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const at = Date.now();
      const webhookId = String(request.headers['x-webhook-id']);
      webhookIds.set(webhookId, (webhookIds.get(webhookId) ?? 0) + 1);
      const record = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: { emp_number?: string } }).data?.emp_number;
      if (record) {
        const seen = received.get(record);
        if (seen) seen.count += 1;
        else received.set(record, { firstAt: at, count: 1 });
      }
      response.writeHead(200, { 'Content-Type': 'application/json' }).end('{"received":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `https://localhost:${(server.address() as AddressInfo).port}/hook` };
}

/** `npm start` as a child, until it answers /health. */
async function startService(certFile: string, temporalAddress: string | null): Promise<{ child: ChildProcess; baseUrl: string }> {
  const child = spawn('npm', ['start'], {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      WEBHOOK_ALLOW_LOOPBACK: 'true',
      NODE_EXTRA_CA_CERTS: certFile,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
      ...(temporalAddress ? { TEMPORAL_ADDRESS: temporalAddress } : {}),
    },
    stdio: ['ignore', 'inherit', 'inherit'],
    detached: true,
  });
  const baseUrl = `http://127.0.0.1:${process.env.PORT ?? 3000}`;
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`npm start exited with code ${child.exitCode}`);
    if (await fetch(`${baseUrl}/health`).then((r) => r.ok, () => false)) return { child, baseUrl };
    await delay(500);
  }
  throw new Error('npm start did not answer /health within 180 s');
}

/**
 * A PostgreSQL process by its part, from the title it sets (`postgres: autovacuum worker`, `postgres: <user> <db>
 * 127.0.0.1(5432) idle`): the server and its background processes, the service's connections, and the workers that
 * come and go (an autovacuum worker holds up to maintenance_work_mem while it vacuums a table, then exits), so a worker
 * that happened to run at a window's peak is not read as the server's memory growing.
 */
function postgresRole(title: string): string {
  if (/^postgres: (autovacuum worker|parallel worker)/.test(title)) return 'postgres workers';
  if (/^postgres: \S+ \S+ (\[local\]|\S+\(\d+\))/.test(title)) return 'postgres connections';
  return 'postgres';
}

/** What a process is called in the table, and the name its shared memory is added up under. */
interface ProcessName {
  name: string;
  /** PostgreSQL's parts share one figure: its shared buffers, whichever part touched them. */
  sharedName: string;
  /** Where a name of many processes also shows its largest one's own memory (their sum follows how many are open). */
  largestName?: string;
}

/** A process's name: a node process by its script, a PostgreSQL process by its part (postgresRole), else its command. */
function processNameOf(pid: number): ProcessName {
  // PostgreSQL's backends rewrite their command line; their command name stays `postgres`.
  const command = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  if (command === 'postgres') {
    const name = postgresRole(args[0] ?? '');
    return { name, sharedName: 'postgres shared', largestName: name === 'postgres connections' ? 'postgres largest connection' : undefined };
  }
  const named = (name: string) => ({ name, sharedName: `${name} shared` });
  // Node names its main thread MainThread: a node process is known by its executable.
  if (path.basename(args[0] ?? '') !== 'node') return named(command);
  // tsx's launcher is a node process of its own that starts the service's with the same script.
  if (/tsx\/dist\/cli\.m?js$/.test(args[1] ?? '')) return named('tsx');
  const script = args.find((arg) => /\.(ts|js|mjs)$/.test(arg) && !arg.includes('node_modules'));
  return named(script ? `node ${script.replace(`${PROJECT_ROOT}/`, '')}` : 'node');
}

/** Each process under `roots` (and the roots), by pid, with its name (processNameOf). */
function processesUnder(roots: number[]): Map<number, ProcessName> {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (/^\d+$/.test(entry)) parents.set(Number(entry), procStat(Number(entry))?.ppid ?? 0);
  }
  const found = new Map<number, ProcessName>();
  const pending = [...roots];
  while (pending.length) {
    const pid = pending.pop()!;
    if (found.has(pid)) continue;
    try {
      found.set(pid, processNameOf(pid));
    } catch {
      continue;
    }
    for (const [child, parent] of parents) if (parent === pid) pending.push(child);
  }
  return found;
}

/**
 * Memory in MB by process name, as proportional set size (processes of one name added up: PostgreSQL's backends, whose
 * shared buffers are then counted once; in RSS each backend would count every buffer it has touched, which grows for
 * hours without any more memory in use). Shared memory is a figure of its own (`postgres shared`): PostgreSQL's shared
 * buffers fill up to their configured size as the tables grow, which is a cache warming, not a leak, and would hide
 * whether the processes' own memory is flat. The connections' sum follows how many the pools hold open at the moment
 * (idle ones close, a busy minute opens more), so the largest connection's own memory says whether each one is flat.
 */
async function memoryByName(roots: number[]): Promise<Record<string, number>> {
  const memory: Record<string, number> = {};
  const add = (name: string, mb: number) => (memory[name] = (memory[name] ?? 0) + mb);
  for (const [pid, { name, sharedName, largestName }] of processesUnder(roots)) {
    // npm, the shell that starts the service and tsx's launcher are not the service.
    if (['npm', 'npm start', 'sh', 'node', 'tsx'].includes(name)) continue;
    const proportional = await proportionalMemoryMb(pid);
    if (proportional === null) continue;
    const { pss, shmem: shared } = proportional;
    const own = pss - shared;
    add(name, own);
    if (shared >= 1) add(sharedName, shared);
    if (largestName) memory[largestName] = Math.max(memory[largestName] ?? 0, own);
  }
  return memory;
}

async function makeTenant(keys: number): Promise<{ companyId: string; senders: { key: string; signingSecret: string }[]; subscriber: string }> {
  const url = process.env.DATABASE_URL || runningEmbeddedPostgresUrl(LOCAL_DATA_DIR, LOCAL_DATABASE);
  if (!url) throw new Error("no database: set DATABASE_URL (and ENCRYPTION_KEY) to the service's, or run `npm start` here");
  const orm = await connectOrm(url, 2);
  try {
    const em = orm.em.fork();
    const box = new SecretBox(parseEncryptionKey(process.env.ENCRYPTION_KEY || localEncryptionKey()));
    const company = await createCompany(em, `Soak ${new Date().toISOString()}`);
    const issue = (name: string, scopes: string[]) => issueApiKey(em, box, { companyId: company.id, name, scopes });
    const senders = [];
    for (let i = 0; i < keys; i++) senders.push(await issue(`soak sender ${i + 1}`, [INBOUND_SCOPE]));
    // Changes are not delivered to the endpoints of the key that made them: the endpoint is another key's.
    const subscriber = await issue('soak subscriber', [WEBHOOKS_MANAGE_SCOPE]);
    return { companyId: company.id, senders: senders.map((s) => ({ key: s.key, signingSecret: s.signingSecret })), subscriber: subscriber.key };
  } finally {
    await orm.close();
  }
}

const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1));

async function main() {
  const { certFile } = testCertificate();
  const received = new Map<string, Received>();
  const webhookIds = new Map<string, number>();
  const receiver = await startReceiver(received, webhookIds);
  let service: ChildProcess | null = null;
  let temporal: PostgresTemporal | null = null;
  let temporalDir: string | null = null;
  let baseUrl = process.env.BASE_URL?.replace(/\/$/, '');
  const pids = (process.env.SOAK_PIDS ?? '').split(',').filter(Boolean).map(Number);
  // The Temporal server's and its PostgreSQL's, shown apart from the service's own PostgreSQL.
  const temporalPids: number[] = [];
  try {
    if (!baseUrl) {
      if (options.temporal === 'postgres') {
        const dir = mkdtempSync(path.join(os.tmpdir(), 'soak-temporal-'));
        // As root, PostgreSQL runs as the postgres user: a folder it can enter.
        chmodSync(dir, 0o755);
        temporal = await startPostgresTemporal(dir, installTemporalServer());
        temporalDir = dir;
        temporalPids.push(...temporal.pids());
        console.log(`Temporal server ${TEMPORAL_SERVER_VERSION} with PostgreSQL persistence at ${temporal.address}`);
      }
      const started = await startService(certFile, temporal?.address ?? null);
      service = started.child;
      baseUrl = started.baseUrl;
      pids.push(service.pid!);
      // Stopped early (Ctrl+C, or a supervisor's SIGTERM): the service it started goes with it.
      const group = service.pid!;
      for (const signal of ['SIGINT', 'SIGTERM'] as const) {
        process.once(signal, () => {
          process.kill(-group, 'SIGTERM');
          void (temporal?.stop() ?? Promise.resolve()).finally(() => process.exit(130));
        });
      }
    } else {
      console.log(`Against ${baseUrl}: it must run here with WEBHOOK_ALLOW_LOOPBACK=true and NODE_EXTRA_CA_CERTS=${certFile}`);
    }
    // The spec's inbound limits per key, 50 a minute and 1,000 an hour, with a tenth to spare.
    const total = Math.ceil(RATE * MINUTES * 60);
    const keys = Math.max(1, Math.ceil(Math.max((RATE * 60) / 45, (RATE * Math.min(MINUTES, 60) * 60) / 900)));
    const tenant = await makeTenant(keys);
    await subscribeToEmployeeCreated(baseUrl, tenant.subscriber, receiver.url);
    console.log(`Soak: ${fmt(RATE)} signed employee.created a second for ${MINUTES} min (${total.toLocaleString('en-US')} records over ${keys} keys), windows of ${WINDOW_MS / 60_000} min`);

    const sent = new Map<string, Sent>();
    const refused: Record<string, number> = {};
    const started = Date.now();
    const windowCount = Math.ceil((MINUTES * 60_000) / WINDOW_MS);
    const peakMemory: Record<string, number>[] = Array.from({ length: windowCount }, () => ({}));
    // The machine's 1-minute load average: says whether a window shared the machine with other work.
    const peakLoad: number[] = new Array<number>(windowCount).fill(0);
    const sampleMemory = async () => {
      const window = Math.min(windowCount - 1, Math.floor((Date.now() - started) / WINDOW_MS));
      peakLoad[window] = Math.max(peakLoad[window]!, os.loadavg()[0]!);
      const serviceMemory = await memoryByName(pids);
      const temporalMemory = await memoryByName(temporalPids);
      const memory = { ...serviceMemory, ...Object.fromEntries(Object.entries(temporalMemory).map(([name, mb]) => [`Temporal's ${name}`, mb])) };
      for (const [name, mb] of Object.entries(memory)) peakMemory[window]![name] = Math.max(peakMemory[window]![name] ?? 0, mb);
    };
    // Not every second: reading a machine's worth of smaps_rollup costs a few hundred ms of the kernel's time
    // (proportionalMemoryMb), which the service would then share its 2 cores with. One sample at a time.
    // A holder, not a `let`: TypeScript would read a `let` set only in callbacks as null where it is awaited.
    const sampler: { running: Promise<void> | null } = { running: null };
    const memoryTimer = setInterval(() => {
      sampler.running ??= sampleMemory().finally(() => (sampler.running = null));
    }, MEMORY_SAMPLE_MS);
    const inFlight = new Set<Promise<void>>();
    const tag = `soak-${started}`;
    let printed = 0;
    for (let n = 0; n < total; n++) {
      // Paced by the clock, not by the answers: a slow answer does not slow the offered rate.
      const due = started + (n * 1000) / RATE;
      if (due > Date.now()) await delay(due - Date.now());
      const window = Math.floor((Date.now() - started) / WINDOW_MS);
      while (printed < window) printWindow(printed++);
      const key = tenant.senders[n % keys]!;
      const record = `${tag}-${n}`;
      const request: Promise<void> = offerSignedEmployee(baseUrl, key, record, 'soak', refused)
        .then((accepted) => {
          if (accepted) sent.set(record, { committedAt: Date.now(), window });
        })
        .finally(() => inFlight.delete(request));
      inFlight.add(request);
    }
    await Promise.all(inFlight);
    // The last records' deliveries, bounded by the drain time.
    const drainDeadline = Date.now() + DRAIN_MS;
    while (Date.now() < drainDeadline && [...sent.keys()].some((record) => !received.has(record))) await delay(500);
    clearInterval(memoryTimer);
    await sampler.running;
    while (printed < windowCount) printWindow(printed++);

    console.log('\n| Window | Committed | Delivered | Lost | Received twice | Commit → receipt | Slowest | Load average peak | Memory peak (MB) |');
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (let w = 0; w < windowCount; w++) console.log(row(w, true));
    const lost = [...sent.keys()].filter((record) => !received.has(record)).length;
    const twice = [...webhookIds.values()].filter((count) => count > 1).length;
    console.log(
      `\nSoak ended: ${sent.size.toLocaleString('en-US')} committed, ${lost} lost, ${twice} received twice (by X-Webhook-ID)` +
        (Object.keys(refused).length ? `; refused ${Object.entries(refused).map(([status, count]) => `${count} × ${status}`).join(', ')}` : ''),
    );
    process.exitCode = lost > 0 || twice > 0 || sent.size < total ? 1 : 0;

    function row(w: number, final: boolean): string {
      const records = [...sent].filter(([, s]) => s.window === w);
      const delivered = records.filter(([record]) => received.has(record));
      const timed = delivered.map(([record, s]) => ({ ms: received.get(record)!.firstAt - s.committedAt, at: s.committedAt }));
      const latencies = timed.map((t) => t.ms);
      // When the slowest delivery was committed, to find the stall behind a p99 in the service's and PostgreSQL's logs.
      const slowest = timed.reduce<{ ms: number; at: number } | null>((worst, t) => (worst && worst.ms >= t.ms ? worst : t), null);
      const twiceHere = delivered.filter(([record]) => received.get(record)!.count > 1).length;
      const latency = latencies.length ? summary(latencies) : null;
      const memory = Object.entries(peakMemory[w] ?? {})
        .map(([name, mb]) => `${name} ${fmt(mb)}`)
        .join(', ');
      const from = (w * WINDOW_MS) / 60_000;
      return `| ${from}–${from + WINDOW_MS / 60_000} min | ${records.length} | ${delivered.length} | ${final ? records.length - delivered.length : `${records.length - delivered.length} not yet`} | ${twiceHere} | ${latency ? `p50 ${fmt(latency.p50)} / p99 ${fmt(latency.p99)} ms` : '–'} | ${slowest ? `${fmt(slowest.ms)} ms, committed ${new Date(slowest.at).toISOString().slice(11, 19)} UTC` : '–'} | ${peakLoad[w]!.toFixed(1)} | ${memory} |`;
    }
    function printWindow(w: number) {
      console.log(row(w, false));
    }
  } finally {
    if (service?.pid) {
      // The whole group: npm, tsx and the service's node process.
      process.kill(-service.pid, 'SIGTERM');
      await new Promise((resolve) => service!.once('exit', resolve));
    }
    await temporal?.stop();
    if (temporalDir) rmSync(temporalDir, { recursive: true, force: true });
    await new Promise((resolve) => receiver.server.close(resolve));
    receiver.server.closeAllConnections();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
