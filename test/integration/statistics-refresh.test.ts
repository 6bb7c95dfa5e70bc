import type { EntityManager } from '@mikro-orm/postgresql';
import { connectOrm } from '../../src/database';
import { StatisticsRefresh } from '../../src/db/statistics-refresh';
import { createLogger } from '../../src/logger';
import { createTestDatabase } from '../helpers/stack';

/** The planner's statistics of a table a burst grows are refreshed by the writer, not a minute later by autovacuum. */
describe('statistics refresh', () => {
  /** The table's rows as the last ANALYZE (or VACUUM) counted them: -1 before the first; autovacuum is off on the tables here. */
  const reltuplesOf = async (em: EntityManager, table: string) =>
    Number((await em.execute<{ n: number }[]>(`select reltuples::float8 as n from pg_class where oid = ?::regclass`, [table]))[0]!.n);
  /** Notes `rows` written, waits for the refresh that may have started, and answers the rows the table is counted at. */
  const countedAfterWriting = async (refresh: StatisticsRefresh, em: EntityManager, table: string, rows: number) => {
    refresh.noteWritten(rows);
    await refresh.settled();
    return reltuplesOf(em, table);
  };

  it('analyzes the table once the rows written reach the minimum and the share of the table, not before', async () => {
    const orm = await connectOrm(await createTestDatabase(), 2);
    const em = () => orm.em.fork() as EntityManager;
    try {
      await em().execute('create table statistics_refresh_probe (id int not null) with (autovacuum_enabled = false)');
      const insert = (rows: number) => em().execute(`insert into statistics_refresh_probe select generate_series(1, ${rows})`);
      const refresh = new StatisticsRefresh({ table: 'statistics_refresh_probe', em, logger: createLogger('silent'), minRows: 500, share: 0.2 });
      const counted = (written: number) => countedAfterWriting(refresh, em(), 'statistics_refresh_probe', written);

      await insert(1000);
      expect(await counted(400)).toBe(-1);
      expect(await counted(600)).toBe(1000);

      // 1,000 rows counted: the next refresh is due after max(500, a fifth of 1,000) rows.
      await insert(4000);
      expect(await counted(499)).toBe(1000);
      expect(await counted(1)).toBe(5000);

      // 5,000 counted: a fifth of it, 1,000, is now the larger bound.
      await insert(1000);
      expect(await counted(999)).toBe(5000);
      expect(await counted(1)).toBe(6000);
    } finally {
      await orm.close();
    }
  });

  it('gives up, without an error, when another session holds the table past the lock timeout', async () => {
    const orm = await connectOrm(await createTestDatabase(), 3);
    const em = () => orm.em.fork() as EntityManager;
    try {
      await em().execute('create table statistics_refresh_held (id int not null) with (autovacuum_enabled = false)');
      await em().execute('insert into statistics_refresh_held select generate_series(1, 100)');
      const refresh = new StatisticsRefresh({ table: 'statistics_refresh_held', em, logger: createLogger('silent'), minRows: 10, share: 0.2 });
      const holder = em();
      await holder.transactional(async (tx) => {
        // SHARE UPDATE EXCLUSIVE is what a running ANALYZE or VACUUM (a replica's, autovacuum's) holds.
        await tx.execute('lock table statistics_refresh_held in share update exclusive mode');
        refresh.noteWritten(100);
        await refresh.settled();
      });
      expect(await reltuplesOf(em(), 'statistics_refresh_held')).toBe(-1);
      // The next rows written try again.
      expect(await countedAfterWriting(refresh, em(), 'statistics_refresh_held', 10)).toBe(100);
    } finally {
      await orm.close();
    }
  });
});
