import { build } from 'esbuild';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { closeSync, fstatSync, globSync, mkdirSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres';
import { connectOrm, migrate } from '../src/database';
import { PROJECT_ROOT } from '../src/paths';
import { startTemporalDevServer } from '../src/temporal/dev-server';
import { freePort } from '../test/helpers/ports';
import { startScriptOf } from '../test/helpers/processes';
import { devServerCpu, procStat, rssMb, treeCpuSeconds } from './proc';

/** PostgreSQL and Temporal for one run: DATABASE_URL / TEMPORAL_ADDRESS when set (a database of its own on that server), else embedded ones. */
export interface Servers {
  databaseUrl: string;
  temporalAddress: string;
  /** CPU seconds used so far by the embedded servers' processes, by part ('PostgreSQL', 'dev server'); none of one given by URL. */
  cpuSeconds(): Record<string, number>;
  stop(): Promise<void>;
}

/**
 * pg_stat_statements, preloaded in the embedded PostgreSQL: the benchmark counts the statements a delivery makes
 * (bench/delivery-cost.ts). It costs every statement a little, the ceilings' as much as the service's.
 */
const STATEMENT_STATISTICS = { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'top' };

export async function startServers(dir: string): Promise<Servers> {
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const step of stops.reverse()) await step().catch((error: unknown) => console.error('stop failed:', error));
  };
  try {
    let databaseUrl: string;
    let postgresPid: number | null = null;
    if (process.env.DATABASE_URL) {
      databaseUrl = await createDatabase(process.env.DATABASE_URL, `bench_${randomBytes(4).toString('hex')}`);
      stops.push(() => dropDatabase(databaseUrl));
    } else {
      const db = await startEmbeddedPostgres({ dataDir: dir, port: await freePort(), database: 'bench', settings: STATEMENT_STATISTICS });
      stops.push(db.stop);
      databaseUrl = db.url;
      postgresPid = Number(readFileSync(path.join(db.clusterDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    }
    let temporalAddress = process.env.TEMPORAL_ADDRESS;
    if (!temporalAddress) {
      // A file, as `npm start` keeps it: the in-memory server would flatter the delivery figures. Its folder is
      // the embedded PostgreSQL's, which is not made when DATABASE_URL gives the database.
      mkdirSync(dir, { recursive: true });
      const temporal = await startTemporalDevServer({ dbFilename: path.join(dir, 'temporal.db'), namespace: 'default' });
      stops.push(temporal.stop);
      temporalAddress = temporal.address;
    }
    const orm = await connectOrm(databaseUrl, 2);
    try {
      await migrate(orm);
    } finally {
      await orm.close();
    }
    const cpuSeconds = () => ({ ...(postgresPid ? { PostgreSQL: treeCpuSeconds([postgresPid]) } : {}), ...devServerCpu() });
    return { databaseUrl, temporalAddress, cpuSeconds, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

const adminUrl = (url: string) => Object.assign(new URL(url), { pathname: '/postgres' }).toString();

async function createDatabase(serverUrl: string, name: string): Promise<string> {
  const admin = new PgClient({ connectionString: adminUrl(serverUrl) });
  await admin.connect();
  try {
    await admin.query(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  return Object.assign(new URL(serverUrl), { pathname: `/${name}` }).toString();
}

async function dropDatabase(url: string): Promise<void> {
  const admin = new PgClient({ connectionString: adminUrl(url) });
  await admin.connect();
  try {
    await admin.query(`drop database "${new URL(url).pathname.slice(1)}" with (force)`);
  } finally {
    await admin.end();
  }
}

const cpuSeconds = (pid: number): number => procStat(pid)?.cpuSeconds ?? 0;

export interface NodeProcess {
  name: string;
  child: ChildProcess;
  /** Highest RSS seen since start or the last resetPeakRss (sampled every 200 ms), in MB. */
  peakRssMb(): number;
  /** Starts the peak over: peakRssMb() then covers what comes after. */
  resetPeakRss(): void;
  /** RSS now, in MB. */
  rssMb(): number;
  /** CPU time used so far (user + system), in seconds. */
  cpuSeconds(): number;
  /** The end of what it printed (stdout and stderr), for error messages. */
  output(): string;
  /** SIGTERM, then waits for the exit (a CPU profile is written at exit). */
  stop(): Promise<void>;
}

export interface CompiledProject {
  /** The compiled file of a TypeScript file of the project (`src/api/main.ts` → `…/src/api/main.js`). */
  entry(file: string): string;
  remove(): void;
}

/**
 * The project as plain JavaScript, file by file like `npm run build`, so the processes run as in production
 * (`node dist/src/api/main.js`) without tsx compiling at run time, which costs memory and start-up CPU. esbuild
 * takes a second where tsc takes a minute on a busy 2-core machine. Inside the project, where paths.ts finds
 * package.json and schemas/.
 */
export async function compileProject(): Promise<CompiledProject> {
  const outdir = path.join(PROJECT_ROOT, 'dist', `bench-${randomBytes(4).toString('hex')}`);
  const entryPoints = ['src', 'workflows', 'activities', 'bench'].flatMap((dir) => globSync(`${dir}/**/*.ts`, { cwd: PROJECT_ROOT }));
  await build({
    absWorkingDir: PROJECT_ROOT,
    entryPoints,
    outdir,
    outbase: '.',
    format: 'cjs',
    platform: 'node',
    target: 'node22',
    logLevel: 'error',
  });
  return {
    entry: (file) => path.join(outdir, file.replace(/\.ts$/, '.js')),
    remove: () => rmSync(outdir, { recursive: true, force: true }),
  };
}

/**
 * Runs a compiled entry point as a Node process of its own, the way the services run in production (one
 * process per role, `as` package.json's start script runs it), with `--cpu-prof` into `profileDir` when given.
 */
export function startNode(
  name: string,
  script: string,
  env: Record<string, string>,
  options: { logDir: string; profileDir?: string; as?: 'start:api' | 'start:worker' },
): NodeProcess {
  const { logDir, profileDir } = options;
  const production = options.as ? startScriptOf(options.as) : { env: {}, flags: [] };
  // A folder of its own per process: each of its threads (the workflow thread too) writes a profile there, named by Node.
  const profile = [...production.flags, ...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', path.join(profileDir, name)] : [])];
  // Into a file, as a log collector would take it: a pipe this busy process drains late would block the
  // service's synchronous log writes and show up as its own cost.
  const logFile = path.join(logDir, `${name}.log`);
  const log = openSync(logFile, 'a');
  const child = spawn(process.execPath, [...profile, script], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...production.env, ...env },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(child.pid!) ?? 0);
  }, 200);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => clearInterval(sampler));
  return {
    name,
    child,
    peakRssMb: () => Math.max(peak, rssMb(child.pid!) ?? 0),
    resetPeakRss: () => {
      peak = rssMb(child.pid!) ?? 0;
    },
    rssMb: () => rssMb(child.pid!) ?? 0,
    cpuSeconds: () => cpuSeconds(child.pid!),
    output: () => tail(logFile),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The last 20 kB of a file: enough to explain a failure. */
function tail(file: string): string {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, 20_000);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    return buffer.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Waits until `text` appears in the process's output; fails when it exits first or after `timeoutMs`. */
export async function waitForOutput(proc: NodeProcess, text: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!proc.output().includes(text)) {
    if (proc.child.exitCode !== null) throw new Error(`${proc.name} exited with ${proc.child.exitCode}:\n${proc.output()}`);
    if (Date.now() > deadline) throw new Error(`${proc.name} did not print "${text}" within ${timeoutMs} ms:\n${proc.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits until GET `url` answers 200. */
export async function waitForHttp(url: string, proc: NodeProcess, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.child.exitCode !== null) throw new Error(`${proc.name} exited with ${proc.child.exitCode}:\n${proc.output()}`);
    const ok = await fetch(url).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms:\n${proc.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * The environment of a phase's own api and worker on the run's servers: task queues of the phase's own (another
 * phase's runs are not theirs to take) and a fresh encryption key, which the phase also needs to seed its tenants.
 */
export function phaseEnv(servers: Servers, phase: string): Record<string, string> & { ENCRYPTION_KEY: string } {
  const runId = randomUUID();
  return {
    DATABASE_URL: servers.databaseUrl,
    TEMPORAL_ADDRESS: servers.temporalAddress,
    TEMPORAL_OPERATIONS_TASK_QUEUE: `bench-${phase}-operations-${runId}`,
    TEMPORAL_DELIVERIES_TASK_QUEUE: `bench-${phase}-deliveries-${runId}`,
    TEMPORAL_DRAIN_TASK_QUEUE: '',
    ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'info',
  };
}

