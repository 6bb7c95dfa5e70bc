import { Migration } from '@mikro-orm/migrations';

/**
 * Tracing (src/observability/): an outbox event and its deliveries keep the W3C trace context of the change, so the
 * deliveries' runs continue its trace; an attempt keeps the trace id it was made in.
 */
export class Migration20261130000000TraceContext extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "outbox_events" add column "traceparent" text null, add column "tracestate" text null;`);
    this.addSql(`alter table "webhook_deliveries" add column "traceparent" text null, add column "tracestate" text null;`);
    this.addSql(`alter table "webhook_delivery_attempts" add column "trace_id" text null;`);
  }
}
