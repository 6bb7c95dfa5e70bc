import type { ContactCreate, CustomerCreate, LocationCreate } from '../src/generated/schemas';
import type { Actor } from '../src/domain/accounts/actor';
import type { NewProject } from '../src/domain/work/projects';
import { workflowDef } from '../src/domain/workflow-contract';

/**
 * project.created, one run per company and project code (id `project.created/<company>/<code>`), on the operations
 * task queue. Started by runProjectCreation (src/domain/work/project-creation.ts). No signals or updates.
 */
export const PROJECT_CREATION = workflowDef<ProjectCreationInput, ProjectCreationResult>()({ name: 'projectCreation', taskQueue: 'operations' });

/** An employee named by id (REST) or by employee number (inbound), with the field that named it, for errors. */
export type EmployeeRef = { field: string } & ({ id: string } | { empNumber: string });

/** Input of the projectCreation workflow: everything needed to run it again from scratch. */
export interface ProjectCreationInput {
  actor: Actor;
  eventId: string;
  /** Chosen before the workflow starts, so a retried or resumed run recognises the project it wrote. */
  projectId: string;
  project: Omit<NewProject, 'customer_id' | 'location_id' | 'contact_ids' | 'account_manager_id' | 'internal_manager_id'>;
  /** An existing customer by id, or one found by name (case-insensitively) or created. */
  customer: { id: string } | CustomerCreate;
  /** An existing location of that customer by id, or one found by name under it or created. */
  location: { id: string } | Omit<LocationCreate, 'customer_id'>;
  /** Contacts of the customer, found by first and last name or created. */
  contacts: Omit<ContactCreate, 'customer_id'>[];
  /** Existing contacts of the customer. */
  contactIds: string[];
  accountManager: EmployeeRef | null;
  /** The project owner. */
  internalManager: EmployeeRef | null;
}

export interface ProjectCreationResult {
  projectId: string;
  eventId: string;
  /** False when a retried run found the project its earlier attempt created. */
  created: boolean;
}
