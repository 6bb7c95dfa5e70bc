import { Migration } from '@mikro-orm/migrations';

/**
 * Isolation of endpoints (src/delivery/endpoint-admission.ts): each endpoint gets a circuit breaker; deliveries
 * waiting for their endpoint are marked, oldest first by an index; attempts in flight hold a slot in
 * `webhook_endpoint_slots` (one row per attempt, until it finishes or its lease runs out) so every worker shares the cap.
 * The outbox dispatcher takes waiting events company by company, by an index of them per company.
 */
export class Migration20261128000000EndpointAdmission extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "webhook_endpoints" add column "circuit_state" text not null default 'closed', add column "circuit_failing_deliveries" uuid[] not null default '{}', add column "circuit_opened_at" timestamptz null, add column "circuit_probe_at" timestamptz null, add column "circuit_failed_probes" int not null default 0, add column "circuit_probe_delivery_id" uuid null;`);
    this.addSql(`alter table "webhook_deliveries" add column "held_reason" text null, add column "held_until" timestamptz null;`);
    this.addSql(`create index "webhook_deliveries_endpoint_held_idx" on "webhook_deliveries" ("endpoint_id", "created_at", "id") where "held_until" is not null;`);
    this.addSql(`create index "outbox_events_undispatched_company" on "outbox_events" ("company_id", "created_at", "id") where "dispatched_at" is null;`);
    this.addSql(`create table "webhook_endpoint_slots" (
      "endpoint_id" uuid not null references "webhook_endpoints" ("id") on delete cascade,
      "delivery_id" uuid not null references "webhook_deliveries" ("id") on delete cascade,
      "expires_at" timestamptz not null,
      constraint "webhook_endpoint_slots_pkey" primary key ("endpoint_id", "delivery_id"));`);
  }
}
