import { mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { type EmbeddedDatabase, runningEmbeddedPostgresUrl, startEmbeddedPostgres } from '../../src/db/embedded-postgres';
import { freePort } from '../helpers/ports';

// Only root runs PostgreSQL as another user (postgres), which is what a closed folder gets in the way of.
const asRoot = process.getuid?.() === 0;
const itAsRoot = asRoot ? it : it.skip;

async function query<T extends object>(url: string, sql: string): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

describe('embedded PostgreSQL started by root with its data in a folder the postgres user cannot enter', () => {
  let closed: string;
  let db: EmbeddedDatabase | undefined;
  const clusterDirs = new Set<string>();

  beforeEach(() => {
    // mkdtemp makes the folder 0700, like a clone under /root or a `mktemp -d` folder.
    closed = mkdtempSync(path.join(os.tmpdir(), 'construction-closed-'));
  });

  afterEach(async () => {
    await db?.stop();
    db = undefined;
    for (const dir of clusterDirs) rmSync(dir, { recursive: true, force: true });
    rmSync(closed, { recursive: true, force: true });
  });

  itAsRoot(
    asRoot
      ? 'keeps the cluster where the postgres user can reach it, runs it from a copy of the binaries, and keeps its data across restarts'
      : 'is skipped: it needs root, since only root runs PostgreSQL as the postgres user',
    async () => {
      expect(statSync(closed).mode & 0o777).toBe(0o700);
      const dataDir = path.join(closed, 'data');
      mkdirSync(dataDir);
      const logs: string[] = [];
      const options = { dataDir, port: await freePort(), database: 'closed_folder', onLog: (line: string) => logs.push(line) };

      db = await startEmbeddedPostgres(options);
      clusterDirs.add(db.clusterDir);
      expect(db.clusterDir.startsWith(closed)).toBe(false);
      expect(logs.join('')).toContain(db.clusterDir);
      expect(statSync(closed).mode & 0o777).toBe(0o700);
      // node_modules may be as closed as the data folder, so the server runs from a copy of the binaries.
      const [pid] = readFileSync(path.join(db.clusterDir, 'postmaster.pid'), 'utf8').split('\n');
      expect(readlinkSync(`/proc/${pid}/exe`)).not.toContain('node_modules');
      expect(runningEmbeddedPostgresUrl(dataDir, 'closed_folder')).toBe(db.url);
      expect(await query(db.url, 'select 1 as one')).toEqual([{ one: 1 }]);
      await query(db.url, "create table survivor (name text); insert into survivor values ('before the restart')");

      await db.stop();
      db = undefined;
      expect(runningEmbeddedPostgresUrl(dataDir, 'closed_folder')).toBeNull();

      db = await startEmbeddedPostgres(options);
      clusterDirs.add(db.clusterDir);
      expect(clusterDirs.size).toBe(1);
      expect(await query(db.url, 'select name from survivor')).toEqual([{ name: 'before the restart' }]);
    },
  );
});
