import { Migration } from '@mikro-orm/migrations';

/**
 * Vendors and their sites keep their address in the columns of the one PostalAddress embeddable that
 * customers and locations use: `state` becomes `province` and a vendor's `zip_code` becomes `postal_code`.
 * The wire fields keep their names (state, zip_code); only the columns are renamed.
 */
export class Migration20261127000000PostalAddress extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "vendors" rename column "state" to "province";`);
    this.addSql(`alter table "vendors" rename column "zip_code" to "postal_code";`);
    this.addSql(`alter table "vendor_locations" rename column "state" to "province";`);
  }
}
