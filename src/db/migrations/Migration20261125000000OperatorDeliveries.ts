import { Migration } from '@mikro-orm/migrations';

/**
 * Deliveries operators can act on: endpoints remember why they were disabled, since when they fail, their
 * previous secret during a rotation's overlap and an optional rate limit; alerts can be about an endpoint
 * and get resolved; bulk recoveries are recorded. Attempts per endpoint and second are counted in
 * `webhook_endpoint_send_windows` (one row per endpoint, reset each second) so every worker shares the limit.
 */
export class Migration20261125000000OperatorDeliveries extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "webhook_endpoints" add column "disabled_reason" text null, add column "disabled_at" timestamptz null, add column "failing_since" timestamptz null, add column "previous_secret_sealed" text null, add column "previous_secret_expires_at" timestamptz null, add column "max_attempts_per_second" int null;`);
    this.addSql(`create index "webhook_deliveries_endpoint_status_idx" on "webhook_deliveries" ("endpoint_id", "status", "created_at");`);
    this.addSql(`alter table "webhook_alerts" add column "kind" text not null default 'delivery_failed', add column "resolved_at" timestamptz null;`);
    this.addSql(`alter table "webhook_alerts" alter column "delivery_id" drop not null;`);
    this.addSql(`create table "webhook_recoveries" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "endpoint_id" uuid not null, "since" timestamptz not null, "status" text not null default 'running', "delivery_ids" text[] not null, "requested" int not null default 0, "completed_at" timestamptz null, constraint "webhook_recoveries_pkey" primary key ("id"));`);
    this.addSql(`alter table "webhook_recoveries" add constraint "webhook_recoveries_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "webhook_recoveries" add constraint "webhook_recoveries_endpoint_id_foreign" foreign key ("endpoint_id") references "webhook_endpoints" ("id") on update cascade on delete cascade;`);
    this.addSql(`create table "webhook_endpoint_send_windows" (
      "endpoint_id" uuid not null references "webhook_endpoints" ("id") on delete cascade,
      "window_start" timestamptz not null,
      "count" int not null,
      constraint "webhook_endpoint_send_windows_pkey" primary key ("endpoint_id"));`);
  }
}
