import { MikroORM } from '@mikro-orm/core';
import { Migrator } from '@mikro-orm/migrations';
import { defineConfig, type EntityManager, type PostgreSqlDriver } from '@mikro-orm/postgresql';
import { ConsoleUser } from './console/users/console-user.entity';
import { ApiKey } from './domain/accounts/api-key.entity';
import { Company } from './domain/accounts/company.entity';
import { Contact } from './domain/business/contact.entity';
import { PostalAddress } from './domain/common/postal-address';
import { Customer } from './domain/business/customer.entity';
import { Location } from './domain/business/location.entity';
import { Department } from './domain/people/department.entity';
import { Employee } from './domain/people/employee.entity';
import { Role } from './domain/people/role.entity';
import { CompletionReport, DailyReport } from './domain/reporting/report.entity';
import { ReportRun, ReportSchedule } from './domain/reporting/scheduled-report.entity';
import { Skill } from './domain/people/skill.entity';
import { ApprovalThreshold, AttachmentContent, PurchaseOrder, PurchaseOrderAttachment, PurchaseOrderLineItem } from './domain/supply/purchase-order.entity';
import { VendorLocation } from './domain/supply/vendor-location.entity';
import { Vendor } from './domain/supply/vendor.entity';
import { PayrollRun } from './domain/time/payroll-run.entity';
import { TimeOff } from './domain/time/time-off.entity';
import { Timesheet, TimesheetEntry } from './domain/time/timesheet.entity';
import { WorkType } from './domain/time/work-type.entity';
import { Project } from './domain/work/project.entity';
import { WorkOrder } from './domain/work/work-order.entity';
import { DeliveryAttempt } from './delivery/delivery-attempt.entity';
import { WebhookAlert } from './delivery/webhook-alert.entity';
import { WebhookDelivery } from './delivery/webhook-delivery.entity';
import { WebhookEndpoint } from './delivery/endpoints/webhook-endpoint.entity';
import { WebhookRecovery } from './delivery/webhook-recovery.entity';
import { OutboxEvent } from './events/outbox-event.entity';
import { MIGRATIONS } from './db/migrations';
import { applyRepeatableSql } from './db/repeatable-sql';
import type { Orm } from './db/orm';

/*
 * The database the processes open. It stands above the folders whose entities it maps (the domain, delivery, the
 * outbox, the console), so src/db/ (the ORM type, migrations, embedded PostgreSQL) stays below them.
 */

/** Every mapped entity and embeddable, listed explicitly so discovery is the same from src/ and dist/. */
export const ENTITIES = [
  PostalAddress,
  Company,
  ApiKey,
  Skill,
  Department,
  Role,
  Employee,
  Customer,
  Location,
  Contact,
  Vendor,
  VendorLocation,
  PurchaseOrder,
  PurchaseOrderLineItem,
  PurchaseOrderAttachment,
  AttachmentContent,
  ApprovalThreshold,
  Project,
  WorkOrder,
  DailyReport,
  CompletionReport,
  ReportSchedule,
  ReportRun,
  WorkType,
  TimeOff,
  PayrollRun,
  Timesheet,
  TimesheetEntry,
  OutboxEvent,
  WebhookEndpoint,
  WebhookDelivery,
  DeliveryAttempt,
  WebhookAlert,
  WebhookRecovery,
  ConsoleUser,
];

export function ormConfig(databaseUrl: string, poolMax = 10) {
  return defineConfig({
    clientUrl: databaseUrl,
    entities: ENTITIES,
    pool: { min: 0, max: poolMax },
    forceUtcTimezone: true,
    // Missing references are a programming error here, never something to load lazily behind our back.
    allowGlobalContext: false,
    extensions: [Migrator],
    migrations: { migrationsList: MIGRATIONS, transactional: true, allOrNothing: true, snapshot: false, silent: true },
    discovery: { warnWhenNoEntities: true },
  });
}

export async function connectOrm(databaseUrl: string, poolMax?: number): Promise<Orm> {
  return MikroORM.init<PostgreSqlDriver>(ormConfig(databaseUrl, poolMax));
}

/**
 * Applies every pending migration, then the functions and triggers of src/db/sql/ that changed (src/db/repeatable-sql.ts);
 * safe to run from several processes (the migrator takes a lock table, the files an advisory lock). Returns what it applied.
 */
export async function migrate(orm: Orm): Promise<string[]> {
  const applied = await orm.getMigrator().up();
  const files = await applyRepeatableSql(orm.em.fork() as EntityManager);
  return [...applied.map((m) => m.name), ...files];
}
