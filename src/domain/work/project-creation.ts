import type { ContactCreate, CustomerCreate, LocationCreate } from '../../generated/schemas';
import { ApiError } from '../../errors';
import type { WorkflowGateway } from '../workflow-gateway';
import type { Actor } from '../accounts/actor';
import type { NewProject } from './projects';

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

export type ProjectCreationOutcome =
  | { state: 'completed'; result: ProjectCreationResult }
  | { state: 'running'; projectId: string; eventId: string; workflowId: string };

/**
 * One workflow per company and project code: a request while a run goes joins that run, which refuses it (409)
 * when the run is another request's. Codes that differ only in case name the same project, so they name the same workflow too.
 */
export const projectCreationWorkflowId = (companyId: string, projectCode: string) => `project.created/${companyId}/${projectCode.toLowerCase()}`;

/**
 * Starts the project creation workflow and waits up to `waitMs` for it. When it takes longer the
 * workflow keeps running and the outcome says so; a business failure comes back as its ApiError.
 */
export async function runProjectCreation(workflows: WorkflowGateway, input: ProjectCreationInput, waitMs: number): Promise<ProjectCreationOutcome> {
  const code = input.project.project_code;
  const workflowId = projectCreationWorkflowId(input.actor.companyId, code);
  const customerName = 'name' in input.customer ? input.customer.name : `id ${input.customer.id}`;
  const outcome = await workflows.startAndAwait<ProjectCreationResult>(
    {
      workflowType: 'projectCreation',
      workflowId,
      input,
      whenOpen: 'join',
      afterClosed: 'start',
      memo: { projectId: input.projectId, eventId: input.eventId },
      labels: { companyId: input.actor.companyId, eventType: 'project.created', recordKey: code },
      summary: `project.created ${code} (${input.project.name}) for customer ${customerName}`,
    },
    waitMs,
  );
  // A run that was already going is another request's: the code is taken, as it would be once that run ends.
  const anotherRequests = () => ApiError.conflict('project_code', `A project with project_code "${code}" already exists (another request is creating it)`);
  if (outcome.finished) {
    if (outcome.result.projectId !== input.projectId) throw anotherRequests();
    return { state: 'completed', result: outcome.result };
  }
  if (outcome.memo.projectId !== input.projectId) throw anotherRequests();
  return { state: 'running', projectId: input.projectId, eventId: input.eventId, workflowId };
}
