import { Migration } from '@mikro-orm/migrations';

/**
 * The outbox dispatcher counts each company's deliveries started and not yet begun by a worker
 * (src/delivery/outbox/company-queued-starts.ts): a partial index holds just those, and the few held back or in flight.
 */
export class Migration20261129000000QueuedStarts extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "webhook_deliveries_company_unbegun_idx" on "webhook_deliveries" ("company_id", "created_at") where "status" = 'pending' and "held_until" is null and not "is_test";`);
  }
}
