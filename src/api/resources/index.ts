import { contactsResource } from './contacts';
import { customersResource } from './customers';
import { locationsResource } from './locations';
import { projectsResource } from './projects';
import { schedulesResource } from './schedules';
import type { ResourceDefinition } from './resource';
import { skillsResource } from './skills';
import { vendorLocationsResource } from './vendor-locations';
import { vendorsResource } from './vendors';
import { workOrdersResource } from './work-orders';

/** Every REST collection; a new one is a definition file here, added to this list. */
export const RESOURCES: readonly ResourceDefinition[] = [
  projectsResource,
  workOrdersResource,
  schedulesResource,
  customersResource,
  locationsResource,
  contactsResource,
  vendorsResource,
  vendorLocationsResource,
  skillsResource,
];
