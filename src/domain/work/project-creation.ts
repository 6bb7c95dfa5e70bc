import type { Client } from '@temporalio/client';
import { WorkflowFailedError } from '@temporalio/client';
import type { projectCreation } from '../../../workflows';
import { apiErrorFromWorkflow } from '../../temporal/failures';
import { resultWithin } from '../../temporal/result-within';
import { COMPANY_ID, EVENT_TYPE, RECORD_KEY } from '../../temporal/search-attributes';
import type { Actor } from '../accounts/actor';
import type { ContactCreate, CustomerCreate, LocationCreate } from '../../generated/schemas';
import type { NewProject } from './projects-service';

/** Input of the projectCreation workflow: everything needed to run it again from scratch. */
export interface ProjectCreationInput {
  actor: Actor;
  eventId: string;
  projectId: string;
  customer: CustomerCreate;
  /** The location under the customer (its customer_id is known only once the customer exists). */
  location: Omit<LocationCreate, 'customer_id'>;
  contacts: Omit<ContactCreate, 'customer_id'>[];
  project: Omit<NewProject, 'projectId' | 'customerId' | 'locationId' | 'contactIds' | 'accountManagerId' | 'internalManagerId'>;
  accountManagerEmpNumber?: string;
  internalManagerEmpNumber?: string;
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

/** One workflow per company and project code: a resend while it runs joins it instead of starting another. */
export const projectCreationWorkflowId = (companyId: string, projectCode: string) => `project.created/${companyId}/${projectCode}`;

/**
 * Starts (or joins) the project creation workflow and waits up to `waitMs` for it. When it takes longer the
 * workflow keeps running and the outcome says so; a business failure comes back as its ApiError.
 */
export async function runProjectCreation(
  temporal: Client,
  taskQueue: string,
  input: ProjectCreationInput,
  waitMs: number,
): Promise<ProjectCreationOutcome> {
  const workflowId = projectCreationWorkflowId(input.actor.companyId, input.project.projectCode);
  const handle = await temporal.workflow.start<typeof projectCreation>('projectCreation', {
    taskQueue,
    workflowId,
    args: [input],
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    memo: { projectId: input.projectId, eventId: input.eventId },
    typedSearchAttributes: [
      { key: COMPANY_ID, value: input.actor.companyId },
      { key: EVENT_TYPE, value: 'project.created' },
      { key: RECORD_KEY, value: input.project.projectCode },
    ],
    staticSummary: `project.created ${input.project.projectCode} (${input.project.name}) for customer ${input.customer.name}`,
  });
  try {
    const outcome = await resultWithin<ProjectCreationResult>(handle, waitMs);
    if (outcome.finished) return { state: 'completed', result: outcome.result };
  } catch (error) {
    if (error instanceof WorkflowFailedError) throw apiErrorFromWorkflow(error);
    throw error;
  }
  // The run we joined may be another request's: its memo has the ids it is creating.
  const { memo } = await handle.describe();
  return {
    state: 'running',
    projectId: String(memo?.projectId ?? input.projectId),
    eventId: String(memo?.eventId ?? input.eventId),
    workflowId,
  };
}
