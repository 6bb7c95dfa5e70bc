import type { ResultOf } from '../workflow-contract';
import type { WorkflowGateway } from '../workflow-gateway';
import { PROJECT_CLOSING, type ProjectClosingInput } from '../../../workflows/project-closing.contract';

export type ProjectClosingOutcome = { state: 'completed'; result: ResultOf<typeof PROJECT_CLOSING> } | { state: 'running'; workflowId: string };

export const projectClosingWorkflowId = (companyId: string, projectCode: string) => `project.closed/${companyId}/${projectCode.toLowerCase()}`;

/** Starts (or joins) the projectClosing workflow and waits up to `waitMs` for it; a refusal comes back as its ApiError. */
export async function runProjectClosing(workflows: WorkflowGateway, input: ProjectClosingInput, waitMs: number): Promise<ProjectClosingOutcome> {
  const workflowId = projectClosingWorkflowId(input.actor.companyId, input.projectCode);
  const outcome = await workflows.startAndAwait(
    {
      workflow: PROJECT_CLOSING,
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
