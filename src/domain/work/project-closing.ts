import type { WorkflowGateway } from '../workflow-gateway';
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
export async function runProjectClosing(workflows: WorkflowGateway, input: ProjectClosingInput, waitMs: number): Promise<ProjectClosingOutcome> {
  const workflowId = projectClosingWorkflowId(input.actor.companyId, input.projectCode);
  const outcome = await workflows.startAndAwait<ProjectClosingResult>(
    {
      workflowType: 'projectClosing',
      workflowId,
      input,
      whenOpen: 'join',
      afterClosed: 'start',
      labels: { companyId: input.actor.companyId, eventType: 'project.closed', recordKey: input.projectCode },
      summary: `project.closed ${input.projectCode}${input.closeWorkOrders ? ' with its work orders' : ''}`,
    },
    waitMs,
  );
  return outcome.finished ? { state: 'completed', result: outcome.result } : { state: 'running', workflowId };
}
