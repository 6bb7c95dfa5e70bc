import { Migration } from '@mikro-orm/migrations';

/**
 * Outbound webhooks: endpoints, deliveries, their attempts and failure alerts; and a NOTIFY on every outbox
 * insert (sent at commit) so the dispatcher hears of new events at once instead of at its next poll.
 */
export class Migration20261121000000Webhooks extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "webhook_endpoints" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "api_key_id" uuid null, "url" text not null, "description" text null, "event_types" text[] not null, "payload_shape" text not null default 'A', "secret_sealed" text not null, "status" text not null default 'active', constraint "webhook_endpoints_pkey" primary key ("id"));`);
    this.addSql(`create index "webhook_endpoints_company_idx" on "webhook_endpoints" ("company_id", "created_at", "id");`);
    this.addSql(`create table "webhook_deliveries" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "endpoint_id" uuid not null, "event_id" uuid null, "event_type" text not null, "payload" text not null, "is_test" boolean not null default false, "status" text not null default 'pending', "attempt_count" int not null default 0, "last_attempt_at" timestamptz null, "last_status_code" int null, "last_error" text null, "next_attempt_at" timestamptz null, "delivered_at" timestamptz null, "failed_at" timestamptz null, constraint "webhook_deliveries_pkey" primary key ("id"));`);
    this.addSql(`create index "webhook_deliveries_endpoint_created_idx" on "webhook_deliveries" ("endpoint_id", "created_at");`);
    this.addSql(`create index "webhook_deliveries_company_created_idx" on "webhook_deliveries" ("company_id", "created_at", "id");`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_event_endpoint_unique" unique ("event_id", "endpoint_id");`);
    this.addSql(`create table "webhook_delivery_attempts" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "delivery_id" uuid not null, "attempt_number" int not null, "trigger" text not null, "outcome" text not null default 'in_progress', "status_code" int null, "duration_ms" int null, "error" text null, "response_excerpt" text null, "finished_at" timestamptz null, constraint "webhook_delivery_attempts_pkey" primary key ("id"));`);
    this.addSql(`alter table "webhook_delivery_attempts" add constraint "webhook_delivery_attempts_number_unique" unique ("delivery_id", "attempt_number");`);
    this.addSql(`create table "webhook_alerts" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "delivery_id" uuid not null, "endpoint_id" uuid not null, "attempt_count" int not null, "message" text not null, constraint "webhook_alerts_pkey" primary key ("id"));`);
    this.addSql(`alter table "webhook_alerts" add constraint "webhook_alerts_delivery_attempts_unique" unique ("delivery_id", "attempt_count");`);
    this.addSql(`alter table "webhook_endpoints" add constraint "webhook_endpoints_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "webhook_endpoints" add constraint "webhook_endpoints_api_key_id_foreign" foreign key ("api_key_id") references "api_keys" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_endpoint_id_foreign" foreign key ("endpoint_id") references "webhook_endpoints" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_event_id_foreign" foreign key ("event_id") references "outbox_events" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "webhook_delivery_attempts" add constraint "webhook_delivery_attempts_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "webhook_delivery_attempts" add constraint "webhook_delivery_attempts_delivery_id_foreign" foreign key ("delivery_id") references "webhook_deliveries" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "webhook_alerts" add constraint "webhook_alerts_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "webhook_alerts" add constraint "webhook_alerts_delivery_id_foreign" foreign key ("delivery_id") references "webhook_deliveries" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "webhook_alerts" add constraint "webhook_alerts_endpoint_id_foreign" foreign key ("endpoint_id") references "webhook_endpoints" ("id") on update cascade on delete cascade;`);
    this.addSql(`create function notify_outbox_event() returns trigger language plpgsql as $$
      begin
        perform pg_notify('outbox_events', '');
        return null;
      end $$;`);
    this.addSql(`create trigger outbox_events_notify after insert on outbox_events
      for each statement execute function notify_outbox_event();`);
  }
}
