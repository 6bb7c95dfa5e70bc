import type { Client } from '@temporalio/client';
import { WorkflowFailedError } from '@temporalio/client';
import type { projectClosing } from '../../../workflows';
import { apiErrorFromWorkflow } from '../../temporal/failures';
import { resultWithin } from '../../temporal/result-within';
import { COMPANY_ID, EVENT_TYPE, RECORD_KEY } from '../../temporal/search-attributes';
import type { Actor } from '../accounts/actor';

/** Input of the projectClosing workflow. */
export interface ProjectClosingInput {
  actor: Actor;
  /** The id of the project.closed event. */
  eventId: string;
  projectId: string;
  projectCode: string;
  /** Close the incomplete work orders too; without it, closing fails while there are any. */
  closeWorkOrders: boolean;
}

export interface ProjectClosingResult {
  projectId: string;
  /** The project.closed event's id, or null when the project was closed already. */
  eventId: string | null;
  closedWorkOrders: number;
}

export type ProjectClosingOutcome = { state: 'completed'; result: ProjectClosingResult } | { state: 'running'; workflowId: string };

export const projectClosingWorkflowId = (companyId: string, projectCode: string) => `project.closed/${companyId}/${projectCode.toLowerCase()}`;

/** Starts (or joins) the projectClosing workflow and waits up to `waitMs` for it; a refusal comes back as its ApiError. */
export async function runProjectClosing(temporal: Client, taskQueue: string, input: ProjectClosingInput, waitMs: number): Promise<ProjectClosingOutcome> {
  const workflowId = projectClosingWorkflowId(input.actor.companyId, input.projectCode);
  const handle = await temporal.workflow.start<typeof projectClosing>('projectClosing', {
    taskQueue,
    workflowId,
    args: [input],
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    typedSearchAttributes: [
      { key: COMPANY_ID, value: input.actor.companyId },
      { key: EVENT_TYPE, value: 'project.closed' },
      { key: RECORD_KEY, value: input.projectCode },
    ],
    staticSummary: `project.closed ${input.projectCode}${input.closeWorkOrders ? ' with its work orders' : ''}`,
  });
  try {
    const outcome = await resultWithin<ProjectClosingResult>(handle, waitMs);
    if (outcome.finished) return { state: 'completed', result: outcome.result };
  } catch (error) {
    if (error instanceof WorkflowFailedError) throw apiErrorFromWorkflow(error);
    throw error;
  }
  return { state: 'running', workflowId };
}
