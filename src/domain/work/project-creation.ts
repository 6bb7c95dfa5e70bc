import { ApiError } from '../../errors';
import type { ResultOf } from '../workflow-contract';
import type { WorkflowGateway } from '../workflow-gateway';
import { PROJECT_CREATION, type ProjectCreationInput } from '../../../workflows/project-creation.contract';

export type ProjectCreationOutcome =
  | { state: 'completed'; result: ResultOf<typeof PROJECT_CREATION> }
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
  const outcome = await workflows.startAndAwait(
    {
      workflow: PROJECT_CREATION,
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
