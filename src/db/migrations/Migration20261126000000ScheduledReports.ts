import { Migration } from '@mikro-orm/migrations';

/**
 * Scheduled reports: the schedules (each a Temporal Schedule) and their runs, which keep the report's rows
 * (JSON) or the reason it failed, and stay when their schedule is deleted.
 */
export class Migration20261126000000ScheduledReports extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "report_schedules" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "name" text not null, "report_type" text not null, "cron" text not null, "timezone" text not null default 'UTC', "project_id" uuid null, "period_days" int null, "created_by" uuid not null, constraint "report_schedules_pkey" primary key ("id"));`);
    this.addSql(`create index "report_schedules_company_created_idx" on "report_schedules" ("company_id", "created_at", "id");`);
    this.addSql(`create table "report_runs" ("id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "schedule_id" uuid null, "report_type" text not null, "name" text not null, "status" text not null, "period_start" date not null, "period_end" date not null, "rows" jsonb null, "row_count" int null, "failure_reason" text null, "workflow_id" text not null, constraint "report_runs_pkey" primary key ("id"));`);
    this.addSql(`create index "report_runs_schedule_idx" on "report_runs" ("schedule_id");`);
    this.addSql(`create index "report_runs_company_created_idx" on "report_runs" ("company_id", "created_at", "id");`);
    this.addSql(`alter table "report_runs" add constraint "report_runs_workflow_unique" unique ("workflow_id");`);
    this.addSql(`alter table "report_schedules" add constraint "report_schedules_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "report_runs" add constraint "report_runs_company_id_foreign" foreign key ("company_id") references "companies" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "report_runs" add constraint "report_runs_schedule_id_foreign" foreign key ("schedule_id") references "report_schedules" ("id") on update cascade on delete set null;`);
  }
}
