import { Migration } from '@mikro-orm/migrations';

/**
 * assign_record_seq (src/db/sql/functions/) takes the counters of all of a transaction's records in one order at its
 * first firing: it finds them by this index, which only holds events not numbered yet.
 */
export class Migration20261212000000RecordCountersInOrder extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create index "outbox_events_unsequenced" on "outbox_events" ("company_id", "record_key") where "record_key" is not null and "record_seq" is null;`,
    );
  }
}
