import { proxyActivities } from '@temporalio/workflow';
import type { ProjectCreationActivities } from '../activities/project-creation';
import type { ProjectCreationInput, ProjectCreationResult } from '../src/domain/work/project-creation';

const steps = proxyActivities<ProjectCreationActivities>({
  // Each step is one short transaction; a worker that dies mid-step is noticed after this long.
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/**
 * project.created (webhooks.md §4): the customer when its name is new, the location when new under that
 * customer, the contacts, then the project. Every step is idempotent, so a run resumed after a crash, or a
 * new run for a resend, never duplicates anything.
 */
export async function projectCreation(input: ProjectCreationInput): Promise<ProjectCreationResult> {
  const managers = await steps.checkProjectCreation(input);
  const customerId = await steps.ensureCustomer(input.actor, input.customer);
  const locationId = await steps.ensureLocation(input.actor, customerId, input.location);
  const contactIds = await steps.ensureContacts(input.actor, customerId, input.contacts);
  return steps.createProject(input, { customerId, locationId, contactIds, managers });
}
