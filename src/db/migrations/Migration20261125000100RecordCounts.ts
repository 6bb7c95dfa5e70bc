import { Migration } from '@mikro-orm/migrations';

/** Every table whose unfiltered list (a company's records) answers its exact total from record_counts. */
const COUNTED = [
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
];

/**
 * Exact totals for lists without counting rows: every insert or delete statement on a counted table appends
 * its net change per company to record_counts, in the same transaction, so a reader's snapshot sees the rows
 * and their count change together, and sum(n) is exactly the number of rows it can see. Appends take no
 * locks (a single counter row per company would make every writer of the company wait for the one before
 * it); the retention workflow folds each company's appends into one row. Filled from the tables as they are
 * (the triggers' locks keep writers out until this commits).
 */
export class Migration20261125000100RecordCounts extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "record_counts" ("company_id" uuid not null, "table_name" text not null, "n" bigint not null);`);
    this.addSql(`create index "record_counts_company_table_idx" on "record_counts" ("company_id", "table_name");`);
    this.addSql(`create function count_company_rows() returns trigger language plpgsql as $$
      begin
        if tg_op = 'INSERT' then
          insert into record_counts (company_id, table_name, n) select company_id, tg_table_name, count(*) from new_rows group by company_id;
        else
          insert into record_counts (company_id, table_name, n) select company_id, tg_table_name, -count(*) from old_rows group by company_id;
        end if;
        return null;
      end $$;`);
    for (const table of COUNTED) {
      this.addSql(`create trigger "${table}_count_inserts" after insert on "${table}" referencing new table as new_rows
        for each statement execute function count_company_rows();`);
      this.addSql(`create trigger "${table}_count_deletes" after delete on "${table}" referencing old table as old_rows
        for each statement execute function count_company_rows();`);
      this.addSql(`insert into record_counts (company_id, table_name, n) select company_id, '${table}', count(*) from "${table}" group by company_id;`);
    }
  }
}
