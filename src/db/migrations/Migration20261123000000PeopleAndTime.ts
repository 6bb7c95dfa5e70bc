import { Migration } from '@mikro-orm/migrations';

/**
 * People and time: employee numbers unique ignoring case (as every natural key); work types, with the
 * built-ins of every existing company; time off; timesheets with their entries; payroll runs.
 */
export class Migration20261123000000PeopleAndTime extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "employees" drop constraint "employees_company_emp_number_unique";`);
    this.addSql(`create unique index "employees_company_emp_number_unique" on "employees" ("company_id", lower("emp_number"));`);

    this.addSql(`create table "payroll_runs" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "period_start" date not null, "period_end" date not null, "status" text not null default 'running', "total_count" int null, "requested_by" uuid not null, "workflow_id" text not null, "completed_at" timestamptz null, constraint "payroll_runs_pkey" primary key ("id"));`);
    this.addSql(`create index "payroll_runs_company_created_idx" on "payroll_runs" ("company_id", "created_at", "id");`);
    this.addSql(`create table "time_off" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "employee_id" uuid not null, "start_date" date not null, "end_date" date not null, "start_time" text null, "end_time" text null, "time_off_type" text not null default 'vacation', "status" text not null default 'approved', "reason" text null, "notes" text null, constraint "time_off_pkey" primary key ("id"));`);
    this.addSql(`create index "time_off_company_created_idx" on "time_off" ("company_id", "created_at", "id");`);
    this.addSql(`alter table "time_off" add constraint "time_off_employee_dates_unique" unique ("employee_id", "start_date", "end_date");`);
    this.addSql(`create table "timesheets" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "employee_id" uuid not null, "timesheet_date" date not null, "status" text not null default 'draft', "total_hours" double precision null, "notes" text null, "submitted_at" timestamptz null, "locked_at" timestamptz null, "processed_at" timestamptz null, "payroll_run_id" uuid null, constraint "timesheets_pkey" primary key ("id"));`);
    this.addSql(`create index "timesheets_company_status_date_idx" on "timesheets" ("company_id", "status", "timesheet_date");`);
    this.addSql(`create index "timesheets_company_created_idx" on "timesheets" ("company_id", "created_at", "id");`);
    this.addSql(`alter table "timesheets" add constraint "timesheets_employee_date_unique" unique ("employee_id", "timesheet_date");`);
    this.addSql(`create table "work_types" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "code" text null, "name" text not null, "billable" boolean not null default false, "requires_work_order" boolean null, "pay_multiplier" double precision not null default 1, "is_active" boolean not null default true, "is_default" boolean not null default false, "is_built_in" boolean not null default false, constraint "work_types_pkey" primary key ("id"));`);
    this.addSql(`create index "work_types_company_created_idx" on "work_types" ("company_id", "created_at", "id");`);
    this.addSql(`create unique index "work_types_company_default_unique" on "work_types" ("company_id") where "is_default";`);
    this.addSql(`create unique index "work_types_company_code_unique" on "work_types" ("company_id", lower("code"));`);
    this.addSql(`create unique index "work_types_company_name_unique" on "work_types" ("company_id", lower("name"));`);
    this.addSql(`create table "timesheet_entries" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "timesheet_id" uuid not null, "entry_date" date not null, "hours" double precision not null, "work_type_id" uuid not null, "work_order_id" uuid null, "start_time" text null, "end_time" text null, "notes" text null, constraint "timesheet_entries_pkey" primary key ("id"));`);
    this.addSql(`create index "timesheet_entries_work_order_idx" on "timesheet_entries" ("work_order_id");`);
    this.addSql(`create index "timesheet_entries_work_type_idx" on "timesheet_entries" ("work_type_id");`);
    this.addSql(`create index "timesheet_entries_timesheet_idx" on "timesheet_entries" ("timesheet_id");`);
    this.addSql(`alter table "payroll_runs" add constraint "payroll_runs_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "time_off" add constraint "time_off_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "time_off" add constraint "time_off_employee_id_foreign" foreign key ("employee_id") references "employees" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "timesheets" add constraint "timesheets_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "timesheets" add constraint "timesheets_employee_id_foreign" foreign key ("employee_id") references "employees" ("id") on update cascade on delete restrict;`);
    this.addSql(`alter table "timesheets" add constraint "timesheets_payroll_run_id_foreign" foreign key ("payroll_run_id") references "payroll_runs" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "work_types" add constraint "work_types_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "timesheet_entries" add constraint "timesheet_entries_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "timesheet_entries" add constraint "timesheet_entries_timesheet_id_foreign" foreign key ("timesheet_id") references "timesheets" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "timesheet_entries" add constraint "timesheet_entries_work_type_id_foreign" foreign key ("work_type_id") references "work_types" ("id") on update cascade on delete restrict;`);
    this.addSql(`alter table "timesheet_entries" add constraint "timesheet_entries_work_order_id_foreign" foreign key ("work_order_id") references "work_orders" ("id") on update cascade on delete restrict;`);

    // The built-ins every company has (src/domain/time/work-types.ts), in their order.
    this.addSql(`insert into "work_types" ("id", "company_id", "created_at", "updated_at", "code", "name", "billable", "pay_multiplier", "is_default", "is_built_in")
      select gen_random_uuid(), c."id", now() + t.position * interval '1 microsecond', now() + t.position * interval '1 microsecond', t.code, t.name, t.billable, t.multiplier, t.is_default, true
        from "companies" c
        cross join (values (1, 'REG', 'Regular', true, 1, true), (2, 'OT', 'Overtime', true, 1.5, false), (3, 'VAC', 'Vacation', false, 1, false), (4, 'SICK', 'Sick leave', false, 1, false), (5, 'HOL', 'Holiday', false, 1, false))
          as t(position, code, name, billable, multiplier, is_default);`);
  }
}
