import { Migration } from '@mikro-orm/migrations';

/**
 * Inbound signatures seen within the signature tolerance (replay protection), and Idempotency-Key records
 * of REST and inbound writes. Both are kept per API key and pruned by the writes that add to them.
 */
export class Migration20261122000100RequestGuards extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "inbound_signatures" (
      "api_key_id" uuid not null references "api_keys" ("id") on delete cascade,
      "signature" text not null,
      "seen_at" timestamptz not null default now(),
      constraint "inbound_signatures_pkey" primary key ("api_key_id", "signature"));`);
    this.addSql(`create index "inbound_signatures_seen_idx" on "inbound_signatures" ("api_key_id", "seen_at");`);
    this.addSql(`create table "idempotency_keys" (
      "api_key_id" uuid not null references "api_keys" ("id") on delete cascade,
      "key" text not null,
      "fingerprint" text not null,
      "created_at" timestamptz not null default now(),
      "locked_at" timestamptz null,
      "status" int null,
      "headers" jsonb null,
      "body" text null,
      constraint "idempotency_keys_pkey" primary key ("api_key_id", "key"));`);
    this.addSql(`create index "idempotency_keys_created_idx" on "idempotency_keys" ("api_key_id", "created_at");`);
  }
}
