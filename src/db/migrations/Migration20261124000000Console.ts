import { Migration } from '@mikro-orm/migrations';

/**
 * The account settings console: its users (one company each, an email unique ignoring case), their
 * server-side sessions (stored by the SHA-256 of the cookie's token, so the table gives no one a session),
 * counters of failed sign-ins per account and per IP address, and when each API key was last used.
 */
export class Migration20261124000000Console extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "console_users" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "email" text not null, "name" text not null, "role" text not null, "password_hash" text not null, "last_sign_in_at" timestamptz null, constraint "console_users_pkey" primary key ("id"));`);
    this.addSql(`create unique index "console_users_email_unique" on "console_users" (lower("email"));`);
    this.addSql(`create index "console_users_company_idx" on "console_users" ("company_id");`);
    this.addSql(`alter table "console_users" add constraint "console_users_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`create table "console_sessions" (
      "token_hash" text not null primary key,
      "user_id" uuid not null references "console_users" ("id") on delete cascade,
      "csrf_token" text not null,
      "flash" text null,
      "created_at" timestamptz not null,
      "last_seen_at" timestamptz not null,
      "expires_at" timestamptz not null);`);
    this.addSql(`create index "console_sessions_user_idx" on "console_sessions" ("user_id");`);
    this.addSql(`create index "console_sessions_expires_idx" on "console_sessions" ("expires_at");`);
    this.addSql(`create table "console_login_failures" (
      "subject" text not null primary key,
      "window_start" timestamptz not null,
      "failures" int not null);`);
    this.addSql(`create index "console_login_failures_window_idx" on "console_login_failures" ("window_start");`);
    this.addSql(`alter table "api_keys" add column "last_used_at" timestamptz null;`);
  }
}
