import { ConsoleUser } from '../console/users/console-user.entity';
import { ApiKey } from '../domain/accounts/api-key.entity';
import { Company } from '../domain/accounts/company.entity';
import { Contact } from '../domain/business/contact.entity';
import { PostalAddress } from '../domain/common/postal-address';
import { Customer } from '../domain/business/customer.entity';
import { Location } from '../domain/business/location.entity';
import { Department } from '../domain/people/department.entity';
import { Employee } from '../domain/people/employee.entity';
import { Role } from '../domain/people/role.entity';
import { CompletionReport, DailyReport } from '../domain/reporting/report.entity';
import { ReportRun, ReportSchedule } from '../domain/reporting/scheduled-report.entity';
import { Skill } from '../domain/people/skill.entity';
import { ApprovalThreshold, AttachmentContent, PurchaseOrder, PurchaseOrderAttachment, PurchaseOrderLineItem } from '../domain/supply/purchase-order.entity';
import { VendorLocation } from '../domain/supply/vendor-location.entity';
import { Vendor } from '../domain/supply/vendor.entity';
import { PayrollRun } from '../domain/time/payroll-run.entity';
import { TimeOff } from '../domain/time/time-off.entity';
import { Timesheet, TimesheetEntry } from '../domain/time/timesheet.entity';
import { WorkType } from '../domain/time/work-type.entity';
import { Project } from '../domain/work/project.entity';
import { WorkOrder } from '../domain/work/work-order.entity';
import { DeliveryAttempt } from '../delivery/delivery-attempt.entity';
import { WebhookAlert } from '../delivery/webhook-alert.entity';
import { WebhookDelivery } from '../delivery/webhook-delivery.entity';
import { WebhookEndpoint } from '../delivery/webhook-endpoint.entity';
import { WebhookRecovery } from '../delivery/webhook-recovery.entity';
import { OutboxEvent } from '../events/outbox-event.entity';

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
