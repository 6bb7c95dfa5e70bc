import { proxyActivities } from '@temporalio/workflow';
import type { ProjectClosingActivities } from '../activities/project-closing';
import type { ProjectClosingInput, ProjectClosingResult } from './project-closing.contract';

const steps = proxyActivities<ProjectClosingActivities>({
  startToCloseTimeout: '30 seconds',
  // Bounded like every activity here; refusals (incomplete work orders) fail the run at once.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 12 },
});

/**
 * project.closed (webhooks.md §3, §4): refuse while work orders are incomplete, unless close_work_orders,
 * in which case each is closed (with its status_changed event), then the project (project.closed). A worker
 * that dies midway resumes here: closed work orders are not closed again.
 */
export async function projectClosing(input: ProjectClosingInput): Promise<ProjectClosingResult> {
  const plan = await steps.planProjectClosing(input);
  if (plan.alreadyClosed) return { projectId: input.projectId, eventId: null, closedWorkOrders: 0 };
  let closed = 0;
  for (const workOrderId of plan.workOrderIds) {
    if (await steps.closeWorkOrderWithProject(input.actor, workOrderId)) closed += 1;
  }
  await steps.markProjectClosed(input.actor, input.projectId, input.eventId);
  return { projectId: input.projectId, eventId: input.eventId, closedWorkOrders: closed };
}
