import { Migration } from '@mikro-orm/migrations';

/** Accounts, people, business and work records, and the transactional outbox. */
export class Migration20261120000000Initial extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "companies" ("id" uuid not null, "name" text not null, "work_order_sequence" int not null default 0, "created_at" timestamptz not null, constraint "companies_pkey" primary key ("id"));`);
    this.addSql(`create table "api_keys" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "name" text not null, "prefix" text not null, "key_hash" text not null, "scopes" text[] not null, "signing_secret_sealed" text not null, "revoked_at" timestamptz null, constraint "api_keys_pkey" primary key ("id"));`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_prefix_unique" unique ("prefix");`);
    this.addSql(`create index "api_keys_company_idx" on "api_keys" ("company_id");`);
    this.addSql(`create table "departments" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "name" text not null, constraint "departments_pkey" primary key ("id"));`);
    this.addSql(`create unique index "departments_company_name_unique" on "departments" ("company_id", lower("name"));`);
    this.addSql(`create table "outbox_events" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "event_type" text not null, "data" jsonb not null, "catalog_data" jsonb null, "origin_api_key_id" uuid null, "dispatched_at" timestamptz null, constraint "outbox_events_pkey" primary key ("id"));`);
    this.addSql(`create index "outbox_events_undispatched" on "outbox_events" ("created_at") where "dispatched_at" is null;`);
    this.addSql(`create table "roles" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "name" text not null, constraint "roles_pkey" primary key ("id"));`);
    this.addSql(`create unique index "roles_company_name_unique" on "roles" ("company_id", lower("name"));`);
    this.addSql(`create table "employees" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "emp_number" text not null, "name" text not null, "email" text not null, "phone" text null, "department_id" uuid null, "role_id" uuid null, "employee_type" text not null, "start_date" date null, "emergency_contact_name" text null, "emergency_contact_phone" text null, "emergency_contact_relationship" text null, constraint "employees_pkey" primary key ("id"));`);
    this.addSql(`create index "employees_company_created_idx" on "employees" ("company_id", "created_at", "id");`);
    this.addSql(`alter table "employees" add constraint "employees_company_emp_number_unique" unique ("company_id", "emp_number");`);
    this.addSql(`create table "customers" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "name" text not null, "type" text null, "email" text null, "phone" text null, "website" text null, "status" text null, "notes" text null, "account_manager_id" uuid null, constraint "customers_pkey" primary key ("id"));`);
    this.addSql(`create unique index "customers_company_name_unique" on "customers" ("company_id", lower("name"));`);
    this.addSql(`create table "locations" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "customer_id" uuid not null, "name" text not null, "address_line_1" text null, "address_line_2" text null, "city" text null, "province" text null, "postal_code" text null, "country" text null, "phone" text null, "notes" text null, "latitude" double precision null, "longitude" double precision null, constraint "locations_pkey" primary key ("id"));`);
    this.addSql(`create unique index "locations_customer_name_unique" on "locations" ("customer_id", lower("name"));`);
    this.addSql(`create table "projects" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "project_code" text not null, "name" text not null, "description" text null, "status" text not null default 'active', "priority" text null, "color_index" int null, "customer_id" uuid not null, "location_id" uuid not null, "account_manager_id" uuid null, "internal_manager_id" uuid null, "start_date" date null, "end_date" date null, "equipment" text[] not null, "custom_fields" jsonb not null, "docs" jsonb not null, "closed_at" timestamptz null, constraint "projects_pkey" primary key ("id"));`);
    this.addSql(`create index "projects_company_created_idx" on "projects" ("company_id", "created_at", "id");`);
    this.addSql(`alter table "projects" add constraint "projects_company_code_unique" unique ("company_id", "project_code");`);
    this.addSql(`create table "contacts" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "customer_id" uuid not null, "location_id" uuid null, "first_name" text not null, "last_name" text not null, "title" text null, "email" text null, "phone" text null, "phone_ext" text null, "mobile" text null, "notes" text null, "is_primary" boolean not null default false, "tags" text[] not null, constraint "contacts_pkey" primary key ("id"));`);
    this.addSql(`create unique index "contacts_customer_name_unique" on "contacts" ("customer_id", lower("first_name"), lower("last_name"));`);
    this.addSql(`create table "project_contacts" ("project_id" uuid not null, "contact_id" uuid not null, constraint "project_contacts_pkey" primary key ("project_id", "contact_id"));`);
    this.addSql(`create table "skills" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "name" text not null, constraint "skills_pkey" primary key ("id"));`);
    this.addSql(`create unique index "skills_company_name_unique" on "skills" ("company_id", lower("name"));`);
    this.addSql(`create table "employee_skills" ("employee_id" uuid not null, "skill_id" uuid not null, constraint "employee_skills_pkey" primary key ("employee_id", "skill_id"));`);
    this.addSql(`create table "work_orders" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "project_id" uuid not null, "work_order_number" text not null, "title" text not null, "status" text not null default 'open', "priority" text not null default 'normal', "scheduled_start" timestamptz null, "scheduled_end" timestamptz null, constraint "work_orders_pkey" primary key ("id"));`);
    this.addSql(`create index "work_orders_project_idx" on "work_orders" ("project_id");`);
    this.addSql(`create index "work_orders_company_created_idx" on "work_orders" ("company_id", "created_at", "id");`);
    this.addSql(`alter table "work_orders" add constraint "work_orders_company_number_unique" unique ("company_id", "work_order_number");`);
    this.addSql(`create table "work_order_assignees" ("work_order_id" uuid not null, "employee_id" uuid not null, constraint "work_order_assignees_pkey" primary key ("work_order_id", "employee_id"));`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "departments" add constraint "departments_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "outbox_events" add constraint "outbox_events_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "roles" add constraint "roles_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "employees" add constraint "employees_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "employees" add constraint "employees_department_id_foreign" foreign key ("department_id") references "departments" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "employees" add constraint "employees_role_id_foreign" foreign key ("role_id") references "roles" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "customers" add constraint "customers_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "customers" add constraint "customers_account_manager_id_foreign" foreign key ("account_manager_id") references "employees" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "locations" add constraint "locations_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "locations" add constraint "locations_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "projects" add constraint "projects_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "projects" add constraint "projects_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on update cascade on delete restrict;`);
    this.addSql(`alter table "projects" add constraint "projects_location_id_foreign" foreign key ("location_id") references "locations" ("id") on update cascade on delete restrict;`);
    this.addSql(`alter table "projects" add constraint "projects_account_manager_id_foreign" foreign key ("account_manager_id") references "employees" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "projects" add constraint "projects_internal_manager_id_foreign" foreign key ("internal_manager_id") references "employees" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "contacts" add constraint "contacts_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "contacts" add constraint "contacts_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "contacts" add constraint "contacts_location_id_foreign" foreign key ("location_id") references "locations" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "project_contacts" add constraint "project_contacts_project_id_foreign" foreign key ("project_id") references "projects" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "project_contacts" add constraint "project_contacts_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "skills" add constraint "skills_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "employee_skills" add constraint "employee_skills_employee_id_foreign" foreign key ("employee_id") references "employees" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "employee_skills" add constraint "employee_skills_skill_id_foreign" foreign key ("skill_id") references "skills" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "work_orders" add constraint "work_orders_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "work_orders" add constraint "work_orders_project_id_foreign" foreign key ("project_id") references "projects" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "work_order_assignees" add constraint "work_order_assignees_work_order_id_foreign" foreign key ("work_order_id") references "work_orders" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "work_order_assignees" add constraint "work_order_assignees_employee_id_foreign" foreign key ("employee_id") references "employees" ("id") on update cascade on delete cascade;`);
  }
}
