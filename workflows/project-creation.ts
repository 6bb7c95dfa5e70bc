import { proxyActivities } from '@temporalio/workflow';
import type { ProjectCreationActivities } from '../activities/project-creation';
import type { ProjectCreationInput, ProjectCreationResult } from './project-creation.contract';

const steps = proxyActivities<ProjectCreationActivities>({
  // Each step is one short transaction; a worker that dies mid-step is noticed after this long.
  startToCloseTimeout: '30 seconds',
  // Bounded: an outage of a few minutes is ridden out, then the run fails and a resend starts a new one.
  // Errors retrying cannot fix (the caller's, or data PostgreSQL refuses) fail the run at once.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 12 },
});

/**
 * project.created (webhooks.md §4): check, then create the customer when its name is new, the location when
 * new under that customer, the contacts and the project, all in one transaction. A run resumed after a crash,
 * or a new run for a resend, never duplicates anything.
 */
export async function projectCreation(input: ProjectCreationInput): Promise<ProjectCreationResult> {
  const managers = await steps.checkProjectCreation(input);
  return steps.createProjectWithParties(input, managers);
}
