import type { InboundOperation } from '../operation';
import { contactOperations } from './contact';
import { customerOperations } from './customer';
import { employeeOperations } from './employee';
import { locationOperations } from './location';
import { projectClosed, projectCreated, projectDeleted, projectSearch, projectUpdated } from './project';
import { reportCompletionApproved, reportCompletionSubmitted, reportDailySubmitted } from './report';
import { testConnection } from './test-connection';
import { timeOffOperations } from './time-off';
import { timesheetOperations } from './timesheet';
import { vendorOperations } from './vendor';
import { workOrderCreated, workOrderDeleted, workOrderSearch, workOrderUpdated } from './work-order';

/**
 * Every inbound event_type. A record family (`<record>.created/updated/deleted` by natural key) is one
 * crudOperations definition; a multi-step or special operation is a handler file of its own. Each names its
 * data schema in schemas/inbound/.
 */
export const INBOUND_OPERATIONS: InboundOperation<never>[] = [
  testConnection,
  projectCreated,
  projectUpdated,
  projectDeleted,
  projectClosed,
  projectSearch,
  workOrderCreated,
  workOrderUpdated,
  workOrderDeleted,
  workOrderSearch,
  ...employeeOperations,
  ...customerOperations,
  ...locationOperations,
  ...contactOperations,
  ...vendorOperations,
  ...timeOffOperations,
  ...timesheetOperations,
  reportDailySubmitted,
  reportCompletionSubmitted,
  reportCompletionApproved,
] as InboundOperation<never>[];
