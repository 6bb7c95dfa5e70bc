import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * The tables whose inserts and deletes are counted per company in record_counts (by triggers; see
 * Migration20261125000100RecordCounts): a company's unfiltered list reads its exact total there instead of
 * counting rows.
 */
export const COUNTED_TABLES: ReadonlySet<string> = new Set([
  'customers',
  'locations',
  'contacts',
  'vendors',
  'vendor_locations',
  'projects',
  'work_orders',
  'employees',
  'skills',
  'time_off',
  'timesheets',
  'payroll_runs',
  'work_types',
  'webhook_deliveries',
  'webhook_alerts',
]);

/** SQL of a company's row count of a counted table, for a select list; parameters company id, table name. */
export const RECORD_COUNT_SQL = '(select coalesce(sum(n), 0) from record_counts where company_id = ? and table_name = ?)';

/**
 * Folds the appended changes of up to `groups` (company, table) pairs into one row each, dropping pairs that
 * sum to nothing. Safe beside writers (their uncommitted appends are not seen, so not folded) and beside
 * another compaction (a row the other deleted first is skipped, and only what was deleted is re-added).
 * Returns how many rows it removed.
 */
export async function compactRecordCounts(em: EntityManager, groups: number): Promise<number> {
  const [row] = await em.execute<{ removed: string }[]>(
    `with pairs as (
       select company_id, table_name from record_counts group by company_id, table_name having count(*) > 1 or sum(n) = 0 limit ?
     ), folded as (
       delete from record_counts r using pairs p where r.company_id = p.company_id and r.table_name = p.table_name
       returning r.company_id, r.table_name, r.n
     ), kept as (
       insert into record_counts (company_id, table_name, n)
       select company_id, table_name, sum(n) from folded group by company_id, table_name having sum(n) <> 0
       returning 1
     )
     select (select count(*) from folded) - (select count(*) from kept) as removed`,
    [groups],
  );
  return Number(row!.removed);
}
