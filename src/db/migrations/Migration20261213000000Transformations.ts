import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 63. An endpoint's transformation (src/delivery/endpoints/endpoint-transformation.ts), and what it made of each
 * delivery: the body, headers and path its attempts send. begin_delivery_attempt returns them, a change of its result
 * that PostgreSQL takes only after the old function is dropped: src/db/sql/functions/ defines it again.
 */
export class Migration20261213000000Transformations extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "webhook_endpoints" add column "transformation" jsonb null;`);
    this.addSql(`alter table "webhook_deliveries" add column "transformed_payload" text null, add column "transformed_headers" jsonb null, add column "transformed_path" text null;`);
    this.addSql(
      `drop function if exists begin_delivery_attempt(uuid, uuid, integer, text, text, boolean, boolean, boolean, uuid, uuid, text, integer, integer, integer);`,
    );
  }
}
