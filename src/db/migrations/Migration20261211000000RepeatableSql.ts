import { Migration } from '@mikro-orm/migrations';

/**
 * Functions and triggers move to files of their own (src/db/sql/, applied by src/db/repeatable-sql.ts after the
 * migrations): their checksums are recorded here. No migration from this one on defines a function or a trigger
 * (test/integration/repeatable-sql.test.ts). admit_request's first form, left beside the one that replaced it, goes.
 */
export class Migration20261211000000RepeatableSql extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "repeatable_sql" ("file" text not null, "checksum" text not null, "applied_at" timestamptz not null,
      constraint "repeatable_sql_pkey" primary key ("file"));`);
    this.addSql(`drop function if exists admit_request(uuid, text, int[], int[], text, int);`);
  }
}
