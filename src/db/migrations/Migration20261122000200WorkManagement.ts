import { Migration } from '@mikro-orm/migrations';

/**
 * Work orders get the fields of webhooks.md 2.2 (dates and times kept as given, the former scheduled_start
 * and scheduled_end becoming UTC dates and times), a site lead and an ordered crew; project contacts keep
 * their order too.
 */
export class Migration20261122000200WorkManagement extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "work_orders"
      add column "start_date" date null, add column "end_date" date null, add column "start_time" text null, add column "end_time" text null,
      add column "expected_start_date" date null, add column "expected_end_date" date null, add column "expected_start_time" text null, add column "expected_end_time" text null,
      add column "people_required" int null, add column "people_skill_requirements" jsonb not null default '{}',
      add column "days_hours_required" text null, add column "performed_by" text null, add column "site_lead_id" uuid null,
      add column "scope_of_work" jsonb not null default '{"checklists": []}', add column "equipment" text[] not null default '{}',
      add column "specialty_materials" text[] not null default '{}',
      add column "scheduler_notes" jsonb not null default '{"subtrade_required": null, "scheduling_insights": null}',
      add column "custom_fields" jsonb not null default '{}', add column "display_order" int null,
      add column "require_daily_report" boolean not null default false, add column "require_completion_report" boolean not null default false,
      add column "travel_time_hours" double precision null, add column "additional_labor_cost" double precision not null default 0;`);
    this.addSql(`update "work_orders" set
      "start_date" = ("scheduled_start" at time zone 'UTC')::date, "start_time" = to_char("scheduled_start" at time zone 'UTC', 'HH24:MI'),
      "end_date" = ("scheduled_end" at time zone 'UTC')::date, "end_time" = to_char("scheduled_end" at time zone 'UTC', 'HH24:MI');`);
    this.addSql(`alter table "work_orders" drop column "scheduled_start", drop column "scheduled_end",
      alter column "people_skill_requirements" drop default, alter column "scope_of_work" drop default, alter column "equipment" drop default,
      alter column "specialty_materials" drop default, alter column "scheduler_notes" drop default, alter column "custom_fields" drop default;`);
    this.addSql(`alter table "work_orders" add constraint "work_orders_site_lead_id_foreign" foreign key ("site_lead_id") references "employees" ("id") on update cascade on delete set null;`);
    this.addSql(`create index "work_orders_company_start_idx" on "work_orders" ("company_id", "start_date");`);
    this.addSql(`create index "projects_customer_idx" on "projects" ("customer_id");`);
    for (const table of ['work_order_assignees', 'project_contacts']) {
      this.addSql(`alter table "${table}" drop constraint "${table}_pkey";`);
      this.addSql(`alter table "${table}" add column "position" serial not null;`);
      this.addSql(`alter table "${table}" add constraint "${table}_pkey" primary key ("position");`);
    }
  }
}
