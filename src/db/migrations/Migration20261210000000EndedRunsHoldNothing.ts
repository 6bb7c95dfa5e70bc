import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 43: a delivery whose run had ended could stay marked held, and was counted at its endpoint's door for ever, so
 * that the endpoint's deferred deliveries never started. It happened when the dispatcher's marking of started runs
 * failed (a deadlock with their first attempts' settlements; src/delivery/outbox/statements.ts, STARTED): the delivery
 * was claimed again, its claim's hold set after its run had delivered it. The dispatcher no longer leaves such a hold;
 * this clears those left before.
 */
export class Migration20261210000000EndedRunsHoldNothing extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `update "webhook_deliveries" set "held_until" = null, "held_reason" = null, "woken_at" = null where "held_until" is not null and "status" in ('delivered', 'failed', 'cancelled');`,
    );
  }
}
