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

/** Every REST collection; a new one is a definition file here, added to this list. */
export const RESOURCES: readonly ResourceDefinition[] = [
  employeesResource,
  projectsResource,
  workOrdersResource,
  schedulesResource,
  customersResource,
  locationsResource,
  contactsResource,
  vendorsResource,
  vendorLocationsResource,
  skillsResource,
  timeOffResource,
  timesheetsResource,
  workTypesResource,
  dailyReportsResource,
  completionReportsResource,
  purchaseOrdersResource,
  approvalThresholdsResource,
  reportSchedulesResource,
  reportRunsResource,
];
