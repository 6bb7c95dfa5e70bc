import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '../logger';

export interface StatisticsRefreshOptions {
  /** The table whose statistics are kept current (a trusted identifier, never user input). */
  table: string;
  /** A fresh EntityManager per refresh. */
  em: () => EntityManager;
  logger: Logger;
  /** Rows written since the last refresh before another is due, at least. */
  minRows: number;
  /** …and at least this share of the table's rows as the last refresh counted them. */
  share: number;
}

/**
 * Refreshes the planner's statistics of a table (ANALYZE) once this process has written a share of it since the last
 * refresh. Autovacuum analyzes a table once a minute at most (autovacuum_naptime): a burst that grows the table tenfold
 * within it leaves the planner with the statistics of the small table, and it then reads a partial index's few rows
 * through a full index of thousands (docs/isolation.md: the claims took 30 ms instead of 4 until autovacuum came).
 * At most one refresh runs at a time in a process; one blocked by another's (a replica's, autovacuum's) gives up.
 */
export class StatisticsRefresh {
  private written = 0;
  /** The table's rows as the last refresh counted them; unknown before the first. */
  private rows = 0;
  private running: Promise<void> | null = null;

  constructor(private readonly options: StatisticsRefreshOptions) {}

  /** Counts rows written; starts a refresh in the background when one is due. */
  noteWritten(count: number): void {
    this.written += count;
    if (this.running || this.written < Math.max(this.options.minRows, this.options.share * this.rows)) return;
    this.written = 0;
    this.running = this.refresh()
      .catch((error: unknown) => this.options.logger.debug({ err: error, table: this.options.table }, 'statistics not refreshed; autovacuum will'))
      .finally(() => {
        this.running = null;
      });
  }

  /** Waits for a refresh under way. */
  async settled(): Promise<void> {
    await this.running;
  }

  private async refresh(): Promise<void> {
    const { table } = this.options;
    await this.options.em().transactional(async (tx) => {
      // ANALYZE waits for another's on the table; that one brings the statistics up to date as well.
      await tx.execute(`set local lock_timeout = '1s'`);
      await tx.execute(`analyze ${table}`);
      const [row] = await tx.execute<{ rows: number }[]>(`select greatest(reltuples, 0)::float8 as rows from pg_class where oid = ?::regclass`, [table]);
      this.rows = row?.rows ?? 0;
    });
  }
}
