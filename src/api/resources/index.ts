import type { RestCollection } from '../../domain/accounts/scopes';
import { approvalThresholdsResource } from './approval-thresholds';
import { completionReportsResource } from './completion-reports';
import { contactsResource } from './contacts';
import { customersResource } from './customers';
import { dailyReportsResource } from './daily-reports';
import { employeesResource } from './employees';
import { locationsResource } from './locations';
import { projectsResource } from './projects';
import { purchaseOrdersResource } from './purchase-orders';
import { reportRunsResource } from './report-runs';
import { reportSchedulesResource } from './report-schedules';
import { schedulesResource } from './schedules';
import type { ResourceDefinition } from './resource';
import { skillsResource } from './skills';
import { timeOffResource } from './time-off';
import { timesheetsResource } from './timesheets';
import { vendorLocationsResource } from './vendor-locations';
import { vendorsResource } from './vendors';
import { workOrdersResource } from './work-orders';
import { workTypesResource } from './work-types';

/**
 * Each REST collection's definition, by its collection: REST_COLLECTIONS (src/domain/accounts/scopes.ts) is the one
 * list of them, and a collection without its definition here, or a definition under another's name, does not compile.
 */
const BY_COLLECTION = {
  employees: employeesResource,
  projects: projectsResource,
  'work-orders': workOrdersResource,
  schedules: schedulesResource,
  customers: customersResource,
  locations: locationsResource,
  contacts: contactsResource,
  vendors: vendorsResource,
  'vendor-locations': vendorLocationsResource,
  skills: skillsResource,
  'time-off': timeOffResource,
  timesheets: timesheetsResource,
  'work-types': workTypesResource,
  'daily-reports': dailyReportsResource,
  'completion-reports': completionReportsResource,
  'purchase-orders': purchaseOrdersResource,
  'approval-thresholds': approvalThresholdsResource,
  'report-schedules': reportSchedulesResource,
  'report-runs': reportRunsResource,
} satisfies { [C in RestCollection]: ResourceDefinition & { collection: C } };

/** Every REST collection's definition: the routes and the OpenAPI document are made from these. */
export const RESOURCES: readonly ResourceDefinition[] = Object.values(BY_COLLECTION);
