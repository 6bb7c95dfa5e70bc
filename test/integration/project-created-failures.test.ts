import { v7 as uuidv7 } from 'uuid';
import { projectCreationWorkflowId, runProjectCreation } from '../../src/domain/work/project-creation';
import type { ProjectCreationInput } from '../../workflows/project-creation.contract';
import { ApiError } from '../../src/errors';
import { temporalWorkflows } from '../../src/temporal/temporal-workflows';
import { actorOf, outboxOf, projectCounts } from '../helpers/fixtures';
import { createTenant, startStack, type Tenant, type TestStack } from '../helpers/stack';

/**
 * The poison-workflow defect: data PostgreSQL refuses (which the API now refuses first) used to make the
 * activity retry forever, leave the customer and location behind with their events delivered, and make a
 * corrected resend join the stuck run. The workflow is started here the way the inbound handler starts it,
 * but with input the API would have refused, to prove the workflow itself holds up.
 */
describe('project.created with data the database refuses', () => {
  let stack: TestStack;
  let tenant: Tenant;

  beforeAll(async () => {
    stack = await startStack();
    tenant = await createTenant(stack.orm, ['admin']);
  });
  afterAll(() => stack.close());

  const input = (code: string, overrides: { startDate?: string; customerName?: string } = {}): ProjectCreationInput => ({
    actor: actorOf(tenant),
    eventId: uuidv7(),
    projectId: uuidv7(),
    customer: { name: overrides.customerName ?? `Poison Customer ${code}` },
    location: { name: 'Poison Site' },
    contacts: [{ first_name: 'Pat', last_name: 'Poison' }],
    contactIds: [],
    accountManager: null,
    internalManager: null,
    project: { project_code: code, name: `Project ${code}`, start_date: overrides.startDate },
  });

  async function failureOf(promise: Promise<unknown>): Promise<ApiError> {
    const error = await promise.then(
      (outcome) => outcome,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }

  it.each([
    ['a date PostgreSQL cannot store', 'POISON-DATE', { startDate: '0000-01-01' }],
    ['a NUL character in the customer name', 'POISON-NUL', { customerName: 'Poison\u0000Customer' }],
  ])('fails at once with 400 for %s, leaves nothing behind, and a corrected resend starts a new run', async (_what, code, bad) => {
    const counts = await projectCounts(stack, tenant.companyId);
    const events = (await outboxOf(stack, tenant.companyId)).length;
    const started = Date.now();
    const error = await failureOf(runProjectCreation(temporalWorkflows(stack.temporal, stack.config.temporal.taskQueues), input(code, bad), 20_000));
    expect(error.status).toBe(400);
    expect(error.code).toBe('INVALID_REQUEST');
    // Not retried: a retried activity would take at least its first backoff (1 s) per attempt.
    expect(Date.now() - started).toBeLessThan(10_000);

    const handle = stack.temporal.workflow.getHandle(projectCreationWorkflowId(tenant.companyId, code));
    const failed = await handle.describe();
    expect(failed.status.name).toBe('FAILED');
    const history = await handle.fetchHistory();
    const attempts = history.events!.filter((e) => e.activityTaskStartedEventAttributes).map((e) => e.activityTaskStartedEventAttributes!.attempt ?? 0);
    expect(Math.max(...attempts)).toBe(1);

    // One transaction: no customer, location or contact was left behind, and no event was recorded.
    expect(await projectCounts(stack, tenant.companyId)).toEqual(counts);
    expect((await outboxOf(stack, tenant.companyId)).length).toBe(events);

    const corrected = await runProjectCreation(temporalWorkflows(stack.temporal, stack.config.temporal.taskQueues), input(code), 20_000);
    expect(corrected.state).toBe('completed');
    const after = await handle.describe();
    expect(after.runId).not.toBe(failed.runId);
    expect(after.status.name).toBe('COMPLETED');
    expect(await projectCounts(stack, tenant.companyId)).toEqual({
      customers: counts.customers + 1,
      locations: counts.locations + 1,
      contacts: counts.contacts + 1,
      projects: counts.projects + 1,
    });
  });
});
