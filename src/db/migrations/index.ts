import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261120000000Initial } from './Migration20261120000000Initial';
import { Migration20261120000100RateLimits } from './Migration20261120000100RateLimits';
import { Migration20261121000000Webhooks } from './Migration20261121000000Webhooks';
import { Migration20261122000000BusinessAndVendors } from './Migration20261122000000BusinessAndVendors';
import { Migration20261122000100RequestGuards } from './Migration20261122000100RequestGuards';
import { Migration20261122000200WorkManagement } from './Migration20261122000200WorkManagement';
import { Migration20261123000000PeopleAndTime } from './Migration20261123000000PeopleAndTime';
import { Migration20261124000000Console } from './Migration20261124000000Console';
import { Migration20261124000000Reporting } from './Migration20261124000000Reporting';
import { Migration20261125000000OperatorDeliveries } from './Migration20261125000000OperatorDeliveries';
import { Migration20261125000000PurchaseOrders } from './Migration20261125000000PurchaseOrders';
import { Migration20261125000000RequestAdmission } from './Migration20261125000000RequestAdmission';
import { Migration20261125000100RecordCounts } from './Migration20261125000100RecordCounts';
import { Migration20261126000000ScheduledReports } from './Migration20261126000000ScheduledReports';
import { Migration20261127000000PostalAddress } from './Migration20261127000000PostalAddress';
import { Migration20261128000000EndpointAdmission } from './Migration20261128000000EndpointAdmission';
import { Migration20261129000000QueuedStarts } from './Migration20261129000000QueuedStarts';
import { Migration20261130000000TraceContext } from './Migration20261130000000TraceContext';
import { Migration20261201000000SignatureIdempotencyKey } from './Migration20261201000000SignatureIdempotencyKey';
import { Migration20261202000000InboundRetries } from './Migration20261202000000InboundRetries';
import { Migration20261203000000DeliveryEngine } from './Migration20261203000000DeliveryEngine';

/** Every migration in order. Listed explicitly so the same list runs from src/ (tsx, jest) and dist/. */
export const MIGRATIONS: MigrationObject[] = [
  { name: 'Migration20261120000000Initial', class: Migration20261120000000Initial },
  { name: 'Migration20261120000100RateLimits', class: Migration20261120000100RateLimits },
  { name: 'Migration20261121000000Webhooks', class: Migration20261121000000Webhooks },
  { name: 'Migration20261122000000BusinessAndVendors', class: Migration20261122000000BusinessAndVendors },
  { name: 'Migration20261122000100RequestGuards', class: Migration20261122000100RequestGuards },
  { name: 'Migration20261122000200WorkManagement', class: Migration20261122000200WorkManagement },
  { name: 'Migration20261123000000PeopleAndTime', class: Migration20261123000000PeopleAndTime },
  { name: 'Migration20261124000000Console', class: Migration20261124000000Console },
  { name: 'Migration20261124000000Reporting', class: Migration20261124000000Reporting },
  { name: 'Migration20261125000000OperatorDeliveries', class: Migration20261125000000OperatorDeliveries },
  { name: 'Migration20261125000000PurchaseOrders', class: Migration20261125000000PurchaseOrders },
  { name: 'Migration20261125000000RequestAdmission', class: Migration20261125000000RequestAdmission },
  { name: 'Migration20261125000100RecordCounts', class: Migration20261125000100RecordCounts },
  { name: 'Migration20261126000000ScheduledReports', class: Migration20261126000000ScheduledReports },
  { name: 'Migration20261127000000PostalAddress', class: Migration20261127000000PostalAddress },
  { name: 'Migration20261128000000EndpointAdmission', class: Migration20261128000000EndpointAdmission },
  { name: 'Migration20261129000000QueuedStarts', class: Migration20261129000000QueuedStarts },
  { name: 'Migration20261130000000TraceContext', class: Migration20261130000000TraceContext },
  { name: 'Migration20261201000000SignatureIdempotencyKey', class: Migration20261201000000SignatureIdempotencyKey },
  { name: 'Migration20261202000000InboundRetries', class: Migration20261202000000InboundRetries },
  { name: 'Migration20261203000000DeliveryEngine', class: Migration20261203000000DeliveryEngine },
];
