import { Migration } from '@mikro-orm/migrations';

/**
 * Reporting: daily and completion reports, each with its approval (status, deadline, reminders, decision). One
 * daily report per work order and day unless rejected; one completion report waiting per work order.
 */
export class Migration20261124000000Reporting extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "daily_reports" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "work_order_id" uuid not null, "report_date" date not null, "submitted_by_id" uuid null, "photos" text[] not null, "is_auto_approved" boolean not null default false, "approval_status" text not null default 'pending', "approval_due_at" timestamptz null, "reminders_sent" int not null default 0, "decided_at" timestamptz null, "decided_by_id" uuid null, "decision_notes" text null, "workflow_id" text null, "notes" text null, "work_completed" text null, "materials_used" text null, "weather_conditions" text null, "safety_incidents" text null, "hours_worked" double precision null, "crew_count" int not null, constraint "daily_reports_pkey" primary key ("id"));`);
    this.addSql(`create index "daily_reports_work_order_idx" on "daily_reports" ("work_order_id");`);
    this.addSql(`create index "daily_reports_company_created_idx" on "daily_reports" ("company_id", "created_at", "id");`);
    this.addSql(`create unique index "daily_reports_work_order_date_unique" on "daily_reports" ("work_order_id", "report_date") where "approval_status" <> 'rejected';`);
    this.addSql(`create table "completion_reports" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "work_order_id" uuid not null, "report_date" date not null, "submitted_by_id" uuid null, "photos" text[] not null, "is_auto_approved" boolean not null default false, "approval_status" text not null default 'pending', "approval_due_at" timestamptz null, "reminders_sent" int not null default 0, "decided_at" timestamptz null, "decided_by_id" uuid null, "decision_notes" text null, "workflow_id" text null, "completion_summary" text null, "scope_checklist" jsonb not null, "completion_checklist" jsonb not null, "requires_approval" boolean not null default true, constraint "completion_reports_pkey" primary key ("id"));`);
    this.addSql(`create index "completion_reports_work_order_idx" on "completion_reports" ("work_order_id");`);
    this.addSql(`create index "completion_reports_company_created_idx" on "completion_reports" ("company_id", "created_at", "id");`);
    this.addSql(`create unique index "completion_reports_pending_unique" on "completion_reports" ("work_order_id") where "approval_status" = 'pending';`);
    this.addSql(`alter table "daily_reports" add constraint "daily_reports_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "daily_reports" add constraint "daily_reports_work_order_id_foreign" foreign key ("work_order_id") references "work_orders" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "daily_reports" add constraint "daily_reports_submitted_by_id_foreign" foreign key ("submitted_by_id") references "employees" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "daily_reports" add constraint "daily_reports_decided_by_id_foreign" foreign key ("decided_by_id") references "employees" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "completion_reports" add constraint "completion_reports_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "completion_reports" add constraint "completion_reports_work_order_id_foreign" foreign key ("work_order_id") references "work_orders" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "completion_reports" add constraint "completion_reports_submitted_by_id_foreign" foreign key ("submitted_by_id") references "employees" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "completion_reports" add constraint "completion_reports_decided_by_id_foreign" foreign key ("decided_by_id") references "employees" ("id") on update cascade on delete set null;`);
  }
}
