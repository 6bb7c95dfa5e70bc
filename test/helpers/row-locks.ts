import { Client } from 'pg';
import { waitFor } from './processes';

/**
 * A transaction of the test's own that holds row locks (SELECT … FOR UPDATE) so that a workflow stops at a
 * known step. `waitForWaiter` watches from a second connection: inside the holder's transaction,
 * pg_stat_activity is a snapshot taken at its first read, so a backend connected later would never show.
 */
export async function holdRowLocks(databaseUrl: string, lockQuery: string, params: unknown[]) {
  const holder = new Client({ connectionString: databaseUrl });
  const watcher = new Client({ connectionString: databaseUrl });
  await Promise.all([holder.connect(), watcher.connect()]);
  await holder.query('begin');
  await holder.query(lockQuery, params);
  const holderPid: number = (await holder.query('select pg_backend_pid() as pid')).rows[0].pid;
  return {
    /** Runs a query outside the holder's transaction (sees what others committed). */
    query: (text: string, values?: unknown[]) => watcher.query(text, values),
    /** Resolves once some session waits for a lock the holder holds. */
    waitForWaiter: (what: string, timeoutMs = 30_000) =>
      waitFor(async () => (await watcher.query('select 1 from pg_stat_activity where $1 = any(pg_blocking_pids(pid))', [holderPid])).rows.length > 0, timeoutMs, what),
    release: () => holder.query('rollback'),
    end: async () => {
      await Promise.all([holder.end().catch(() => undefined), watcher.end().catch(() => undefined)]);
    },
  };
}
