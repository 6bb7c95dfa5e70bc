import { Migration } from '@mikro-orm/migrations';

/**
 * Customers get a billing address; vendors and their locations arrive; list indexes for the business
 * collections; outbox events of catalog-only types (po.*) carry no shape A data.
 */
export class Migration20261122000000BusinessAndVendors extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "vendors" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "name" text not null, "type" text null, "trade_specialty" text[] not null, "primary_contact_name" text null, "primary_contact_email" text null, "primary_contact_phone" text null, "address_line_1" text null, "address_line_2" text null, "city" text null, "state" text null, "zip_code" text null, "country" text null, "approval_status" text null, "rating" double precision null, "regions" text[] not null, "notes" text null, "insurance_expiry_date" date null, "compliance_expiry_date" date null, "certifications" text[] not null, "custom_fields" jsonb not null, constraint "vendors_pkey" primary key ("id"));`);
    this.addSql(`create index "vendors_company_created_idx" on "vendors" ("company_id", "created_at", "id");`);
    this.addSql(`create unique index "vendors_company_name_unique" on "vendors" ("company_id", lower("name"));`);
    this.addSql(`alter table "vendors" add constraint "vendors_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);

    this.addSql(`create table "vendor_locations" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "vendor_id" uuid not null, "name" text not null, "address_line_1" text null, "address_line_2" text null, "city" text null, "state" text null, "postal_code" text null, "country" text null, "phone" text null, "email" text null, "is_primary" boolean not null default false, "notes" text null, "latitude" double precision null, "longitude" double precision null, constraint "vendor_locations_pkey" primary key ("id"));`);
    this.addSql(`create index "vendor_locations_company_created_idx" on "vendor_locations" ("company_id", "created_at", "id");`);
    this.addSql(`create unique index "vendor_locations_vendor_name_unique" on "vendor_locations" ("vendor_id", lower("name"));`);
    this.addSql(`alter table "vendor_locations" add constraint "vendor_locations_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "vendor_locations" add constraint "vendor_locations_vendor_id_foreign" foreign key ("vendor_id") references "vendors" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "customers" add column "billing_address_line_1" text null, add column "billing_address_line_2" text null, add column "billing_city" text null, add column "billing_province" text null, add column "billing_postal_code" text null, add column "billing_country" text null;`);
    this.addSql(`create index "customers_company_created_idx" on "customers" ("company_id", "created_at", "id");`);
    this.addSql(`create index "locations_company_created_idx" on "locations" ("company_id", "created_at", "id");`);
    this.addSql(`create index "contacts_company_created_idx" on "contacts" ("company_id", "created_at", "id");`);

    this.addSql(`alter table "outbox_events" alter column "data" drop not null;`);
  }
}
