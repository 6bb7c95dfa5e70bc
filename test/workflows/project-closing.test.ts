import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { ClosingPlan, ProjectClosingActivities } from '../../activities/project-closing';
import type { ProjectClosingInput } from '../../workflows/project-closing.contract';
import { ApiError } from '../../src/errors';
import { apiErrorFromWorkflow, withActivityFailures } from '../../src/temporal/failures';
import type { projectClosing } from '../../workflows/project-closing';
import { createTimeSkippingEnv, recordingCalls, withWorker } from '../helpers/time-skipping';

// workflows/project-closing.ts in skipped time, its activities mocked (wrapped as the worker wraps them).
let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createTimeSkippingEnv();
});
afterAll(() => env?.teardown());

let projectNumber = 0;
function newClosing(): ProjectClosingInput {
  const n = String(++projectNumber).padStart(12, '0');
  return {
    actor: { companyId: '10000000-0000-4000-8000-000000000001', apiKeyId: '20000000-0000-4000-8000-000000000001' },
    eventId: `30000000-0000-4000-8000-${n}`,
    projectId: `40000000-0000-4000-8000-${n}`,
    projectCode: `P-${n}`,
    closeWorkOrders: true,
  };
}

/** The steps, planning `plan`; closing a work order answers whether it closed it (false: an earlier attempt had). */
function closingActivities(plan: () => Promise<ClosingPlan>, closedNow: (workOrderId: string) => boolean = () => true) {
  return recordingCalls(
    env,
    withActivityFailures<ProjectClosingActivities>({
      planProjectClosing: plan,
      closeWorkOrderWithProject: async (_actor, workOrderId) => closedNow(workOrderId),
      markProjectClosed: async () => undefined,
    }),
  );
}

const close = (taskQueue: string, input: ProjectClosingInput) =>
  env.client.workflow.execute<typeof projectClosing>('projectClosing', { taskQueue, workflowId: `project-closing/${input.projectId}`, args: [input] });

describe('projectClosing in skipped time', () => {
  test('closes each incomplete work order, oldest first, then the project; the count leaves out those already closed', async () => {
    const workOrderIds = ['wo-1', 'wo-2', 'wo-3'];
    const { activities, calls } = closingActivities(
      async () => ({ alreadyClosed: false, workOrderIds }),
      (id) => id !== 'wo-2',
    );
    const input = newClosing();
    await withWorker(env, activities, async (taskQueue) => {
      expect(await close(taskQueue, input)).toEqual({ projectId: input.projectId, eventId: input.eventId, closedWorkOrders: 2 });
    });
    expect(calls.map(({ name, args }) => ({ name, args }))).toEqual([
      { name: 'planProjectClosing', args: [input] },
      ...workOrderIds.map((id) => ({ name: 'closeWorkOrderWithProject', args: [input.actor, id] })),
      { name: 'markProjectClosed', args: [input.actor, input.projectId, input.eventId] },
    ]);
  });

  test('a project closed already is left as it is: no event, nothing closed', async () => {
    const { activities, calls } = closingActivities(async () => ({ alreadyClosed: true, workOrderIds: [] }));
    const input = newClosing();
    await withWorker(env, activities, async (taskQueue) => {
      expect(await close(taskQueue, input)).toEqual({ projectId: input.projectId, eventId: null, closedWorkOrders: 0 });
    });
    expect(calls.map((call) => call.name)).toEqual(['planProjectClosing']);
  });

  test('a refusal (incomplete work orders, close_work_orders not given) fails the run at once with its 409', async () => {
    const { activities, calls } = closingActivities(async () => {
      throw new ApiError('CONFLICT', 'Project P-1 has 1 incomplete work order(s): WO-1 (open). Close them first, or send close_work_orders: true.', {
        field: 'close_work_orders',
        reason: 'incomplete work orders: WO-1',
      });
    });
    await withWorker(env, activities, async (taskQueue) => {
      const error = await close(taskQueue, { ...newClosing(), closeWorkOrders: false }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(WorkflowFailedError);
      expect(apiErrorFromWorkflow(error)).toMatchObject({ code: 'CONFLICT', status: 409, details: { field: 'close_work_orders', reason: 'incomplete work orders: WO-1' } });
    });
    expect(calls.map((call) => call.name)).toEqual(['planProjectClosing']);
  });

  test('a work order step failing for a passing reason is retried, and the run goes on from there', async () => {
    let failures = 1;
    const { activities, calls } = closingActivities(
      async () => ({ alreadyClosed: false, workOrderIds: ['wo-1', 'wo-2'] }),
      (id) => {
        if (id === 'wo-2' && failures-- > 0) throw new Error('Connection terminated unexpectedly');
        return true;
      },
    );
    await withWorker(env, activities, async (taskQueue) => {
      expect(await close(taskQueue, newClosing())).toMatchObject({ closedWorkOrders: 2 });
    });
    expect(calls.map((call) => (call.name === 'closeWorkOrderWithProject' ? call.args[1] : call.name))).toEqual(['planProjectClosing', 'wo-1', 'wo-2', 'wo-2', 'markProjectClosed']);
    const [failed, retried] = calls.filter((call) => call.args[1] === 'wo-2');
    expect(retried!.atMs - failed!.atMs).toBeGreaterThanOrEqual(1000);
  });
});
