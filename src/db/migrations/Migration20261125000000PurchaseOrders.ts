import { Migration } from '@mikro-orm/migrations';

/**
 * Purchase orders with their line items, attachments (metadata, and the bytes in a table of their own) and
 * approval state; approval thresholds per role; a per-company purchase order number sequence.
 */
export class Migration20261125000000PurchaseOrders extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "approval_thresholds" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "role_name" text not null, "max_amount" double precision null, constraint "approval_thresholds_pkey" primary key ("id"));`);
    this.addSql(`create index "approval_thresholds_company_created_idx" on "approval_thresholds" ("company_id", "created_at", "id");`);
    this.addSql(`create unique index "approval_thresholds_company_role_unique" on "approval_thresholds" ("company_id", lower("role_name"));`);
    this.addSql(`create table "purchase_orders" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "po_number" text not null, "vendor_id" uuid not null, "project_id" uuid not null, "status" text not null default 'draft', "currency" text not null default 'USD', "not_to_exceed_amount" double precision null, "tax" double precision not null default 0, "notes" text null, "delivery_date" date null, "payment_terms" text null, "created_by_name" text not null, "created_by" uuid not null, "submitted_at" timestamptz null, "workflow_id" text null, "required_approvers" jsonb null, "approval_deadline" timestamptz null, "escalated_at" timestamptz null, "escalated_to_role" text null, "decisions" jsonb not null, "approved_at" timestamptz null, "rejected_at" timestamptz null, "rejection_reason" text null, "receipts" jsonb not null, constraint "purchase_orders_pkey" primary key ("id"));`);
    this.addSql(`create index "purchase_orders_project_idx" on "purchase_orders" ("project_id");`);
    this.addSql(`create index "purchase_orders_vendor_idx" on "purchase_orders" ("vendor_id");`);
    this.addSql(`create index "purchase_orders_company_created_idx" on "purchase_orders" ("company_id", "created_at", "id");`);
    this.addSql(`create unique index "purchase_orders_company_number_unique" on "purchase_orders" ("company_id", lower("po_number"));`);
    this.addSql(`create table "purchase_order_line_items" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "purchase_order_id" uuid not null, "position" int not null, "description" text not null, "quantity" double precision not null, "unit_price" double precision not null, "category" text null, "quantity_received" double precision not null default 0, constraint "purchase_order_line_items_pkey" primary key ("id"));`);
    this.addSql(`create index "purchase_order_line_items_purchase_order_idx" on "purchase_order_line_items" ("purchase_order_id");`);
    this.addSql(`create table "purchase_order_attachments" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "purchase_order_id" uuid not null, "filename" text not null, "file_type" text not null, "file_size" int not null, "category" text null, "notes" text null, "uploaded_by" uuid not null, "uploaded_by_name" text not null, constraint "purchase_order_attachments_pkey" primary key ("id"));`);
    this.addSql(`create index "purchase_order_attachments_purchase_order_idx" on "purchase_order_attachments" ("purchase_order_id", "created_at", "id");`);
    this.addSql(`create table "purchase_order_attachment_contents" ("attachment_id" uuid not null, "bytes" bytea not null, constraint "purchase_order_attachment_contents_pkey" primary key ("attachment_id"));`);
    this.addSql(`alter table "approval_thresholds" add constraint "approval_thresholds_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "purchase_orders" add constraint "purchase_orders_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "purchase_orders" add constraint "purchase_orders_vendor_id_foreign" foreign key ("vendor_id") references "vendors" ("id") on update cascade on delete restrict;`);
    this.addSql(`alter table "purchase_orders" add constraint "purchase_orders_project_id_foreign" foreign key ("project_id") references "projects" ("id") on update cascade on delete restrict;`);
    this.addSql(`alter table "purchase_order_line_items" add constraint "purchase_order_line_items_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "purchase_order_line_items" add constraint "purchase_order_line_items_purchase_order_id_foreign" foreign key ("purchase_order_id") references "purchase_orders" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "purchase_order_attachments" add constraint "purchase_order_attachments_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "purchase_order_attachments" add constraint "purchase_order_attachments_purchase_order_id_foreign" foreign key ("purchase_order_id") references "purchase_orders" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "purchase_order_attachment_contents" add constraint "purchase_order_attachment_contents_attachment_id_foreign" foreign key ("attachment_id") references "purchase_order_attachments" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "companies" add column "purchase_order_sequence" int not null default 0;`);
  }
}
