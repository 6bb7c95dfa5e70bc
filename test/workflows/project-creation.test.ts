import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { ProjectCreationActivities, ResolvedManagers } from '../../activities/project-creation';
import { ApiError } from '../../src/errors';
import type { ProjectCreationInput } from '../../workflows/project-creation.contract';
import { apiErrorFromWorkflow, withActivityFailures } from '../../src/temporal/failures';
import type { projectCreation } from '../../workflows/project-creation';
import { createTimeSkippingEnv, recordingCalls, withWorker } from '../helpers/time-skipping';

// workflows/project-creation.ts in skipped time, its activities mocked (wrapped as the worker wraps them).
let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createTimeSkippingEnv();
});
afterAll(() => env?.teardown());

let projectNumber = 0;
function newProject(): ProjectCreationInput {
  const n = String(++projectNumber).padStart(12, '0');
  return {
    actor: { companyId: '10000000-0000-4000-8000-000000000001', apiKeyId: '20000000-0000-4000-8000-000000000001' },
    eventId: `30000000-0000-4000-8000-${n}`,
    projectId: `40000000-0000-4000-8000-${n}`,
    project: { name: 'Harbour bridge', project_code: `P-${n}` },
    customer: { id: '50000000-0000-4000-8000-000000000001' },
    location: { id: '60000000-0000-4000-8000-000000000001' },
    contacts: [],
    contactIds: [],
    accountManager: null,
    internalManager: { field: 'internal_manager_id', empNumber: 'E-7' },
  };
}

const managers: ResolvedManagers = { accountManagerId: null, internalManagerId: '70000000-0000-4000-8000-000000000007' };

function projectCreationActivities(createProjectWithParties: ProjectCreationActivities['createProjectWithParties'], checkProjectCreation: ProjectCreationActivities['checkProjectCreation'] = async () => managers) {
  return recordingCalls(env, withActivityFailures<ProjectCreationActivities>({ checkProjectCreation, createProjectWithParties }));
}

const created = async (input: ProjectCreationInput) => ({ projectId: input.projectId, eventId: input.eventId, created: true });

async function run(taskQueue: string, input: ProjectCreationInput) {
  return env.client.workflow.execute<typeof projectCreation>('projectCreation', { taskQueue, workflowId: `project-creation/${input.projectId}`, args: [input] });
}

async function failureOf(result: Promise<unknown>): Promise<unknown> {
  const error = await result.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  return apiErrorFromWorkflow(error);
}

describe('projectCreation in skipped time', () => {
  test('checks, then creates the project with its parties in one step, with the managers the check resolved', async () => {
    const { activities, calls } = projectCreationActivities(created);
    const input = newProject();
    await withWorker(env, activities, async (taskQueue) => {
      expect(await run(taskQueue, input)).toEqual({ projectId: input.projectId, eventId: input.eventId, created: true });
    });
    expect(calls.map(({ name, args }) => ({ name, args }))).toEqual([
      { name: 'checkProjectCreation', args: [input] },
      { name: 'createProjectWithParties', args: [input, managers] },
    ]);
  });

  test('a refused check (the caller got it wrong) fails the run at once with its error, creating nothing', async () => {
    const { activities, calls } = projectCreationActivities(created, async () => {
      throw ApiError.invalid('internal_manager_emp_number', 'does not match an employee of your company');
    });
    await withWorker(env, activities, async (taskQueue) => {
      const error = await failureOf(run(taskQueue, newProject()));
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ code: 'INVALID_REQUEST', message: 'internal_manager_emp_number does not match an employee of your company' });
    });
    expect(calls.map((call) => call.name)).toEqual(['checkProjectCreation']);
  });

  test('a step failing for a passing reason (a database outage) is retried, 1 s later', async () => {
    let failures = 1;
    const { activities, calls } = projectCreationActivities(async (input) => {
      if (failures-- > 0) throw new Error('Connection terminated unexpectedly');
      return created(input);
    });
    await withWorker(env, activities, async (taskQueue) => {
      expect(await run(taskQueue, newProject())).toMatchObject({ created: true });
    });
    const [first, retry] = calls.filter((call) => call.name === 'createProjectWithParties');
    expect(retry!.atMs - first!.atMs).toBeGreaterThanOrEqual(1000);
  });

  test('a step that keeps failing is given up after 12 attempts, about 3.5 minutes of retries', async () => {
    const { activities, calls } = projectCreationActivities(async () => {
      throw new Error('Connection terminated unexpectedly');
    });
    await withWorker(env, activities, async (taskQueue) => {
      const error = await failureOf(run(taskQueue, newProject()));
      expect(error).toBeInstanceOf(WorkflowFailedError);
    });
    const attempts = calls.filter((call) => call.name === 'createProjectWithParties');
    expect(attempts).toHaveLength(12);
    // Waits of 1, 2, 4, 8 and 16 s, then 30 s (the maximum) six times.
    expect(attempts.at(-1)!.atMs - attempts[0]!.atMs).toBeGreaterThanOrEqual(211_000);
  });
});
