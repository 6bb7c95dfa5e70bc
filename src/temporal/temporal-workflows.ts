import {
  type Client,
  type ScheduleHandle,
  ScheduleNotFoundError,
  type ScheduleOptionsStartWorkflowAction,
  ScheduleOverlapPolicy,
  ServiceError,
  type WorkflowHandle,
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  type WorkflowStartOptions,
} from '@temporalio/client';
import type { Workflow } from '@temporalio/common';
import { setTimeout as delay } from 'node:timers/promises';
import { inSpan } from '../observability/spans';
import { apiErrorFromWorkflow } from './failures';
import { resultWithin } from './result-within';
import { fairnessOf } from './fairness';
import { APPROVAL_STATUS, COMPANY_ID, EVENT_TYPE, RECORD_KEY } from '../../workflows/search-attributes';
import type { TaskQueues } from '../task-queues';
import {
  type ScheduleGateway,
  ScheduleMissing,
  ScheduleRefused,
  WorkflowAlreadyStarted,
  type WorkflowGateway,
  type WorkflowLabels,
  type WorkflowOutcome,
  type WorkflowStart,
} from '../domain/workflow-gateway';
import type { ResultOf, SignalDef, UpdateDef, UpdateResultOf, WorkflowDef } from '../domain/workflow-contract';
import { taskQueueOf } from './task-queue-of';

/** The gRPC status of a request Temporal refuses as malformed. */
const GRPC_INVALID_ARGUMENT = 3;

/** The search attributes of WorkflowLabels. */
function searchAttributesOf(labels: WorkflowLabels) {
  return [
    { key: COMPANY_ID, value: labels.companyId },
    { key: EVENT_TYPE, value: labels.eventType },
    { key: RECORD_KEY, value: labels.recordKey },
    ...(labels.approvalStatus ? [{ key: APPROVAL_STATUS, value: labels.approvalStatus }] : []),
  ];
}

function startOptions(start: WorkflowStart, queues: TaskQueues): WorkflowStartOptions {
  return {
    taskQueue: taskQueueOf(start.workflow, queues),
    priority: fairnessOf(start.labels.companyId),
    workflowId: start.workflowId,
    args: [start.input],
    ...(start.whenOpen === 'join' ? { workflowIdConflictPolicy: 'USE_EXISTING' as const } : {}),
    workflowIdReusePolicy: start.afterClosed === 'start' ? 'ALLOW_DUPLICATE' : 'ALLOW_DUPLICATE_FAILED_ONLY',
    ...(start.memo ? { memo: start.memo } : {}),
    typedSearchAttributes: searchAttributesOf(start.labels),
    staticSummary: start.summary,
    ...(start.details ? { staticDetails: start.details } : {}),
  };
}

/**
 * The span of a request to a multi-step workflow (start, signal or update, and the wait for its answer), named by the
 * workflow's type, with the company it works for. Not the record key: it may be an employee number.
 */
function inWorkflowSpan<T>(start: WorkflowStart, call: string, work: () => Promise<T>): Promise<T> {
  const attributes = { 'company.id': start.labels.companyId, 'workflow.type': start.workflow.name, 'workflow.operation': start.labels.eventType, 'workflow.call': call };
  return inSpan(start.workflow.name, { attributes }, work);
}

/** The domain's errors for what Temporal throws: a closed run that may not start again, or the business error a run failed with. */
function domainError(error: unknown): unknown {
  if (error instanceof WorkflowExecutionAlreadyStartedError) return new WorkflowAlreadyStarted(error.message, { cause: error });
  return apiErrorFromWorkflow(error);
}

async function awaitOutcome<R>(handle: WorkflowHandle, waitMs: number): Promise<WorkflowOutcome<R>> {
  let outcome;
  try {
    outcome = await resultWithin<R>(handle, waitMs);
  } catch (error) {
    throw error instanceof WorkflowFailedError ? apiErrorFromWorkflow(error) : error;
  }
  if (outcome.finished) return outcome;
  const { memo } = await handle.describe();
  return { finished: false, memo: memo ?? {} };
}

/**
 * A schedule's action with the priority of the runs it starts. The SDK's type of a schedule action leaves priority out,
 * though the client sends it (encodeScheduleAction) and describe() reads it back.
 */
type ScheduleActionWithPriority = ScheduleOptionsStartWorkflowAction<Workflow> & Pick<WorkflowStartOptions, 'priority'>;

function temporalSchedules(temporal: Client, queues: TaskQueues): ScheduleGateway {
  const onSchedule = async (scheduleId: string, act: (handle: ScheduleHandle) => Promise<void>) => {
    try {
      await act(temporal.schedule.getHandle(scheduleId));
    } catch (error) {
      throw error instanceof ScheduleNotFoundError ? new ScheduleMissing(error.message, { cause: error }) : error;
    }
  };
  return {
    async create({ scheduleId, cron, timezone, run, note }) {
      try {
        const action: ScheduleActionWithPriority = {
          type: 'startWorkflow',
          workflowType: run.workflow.name,
          taskQueue: taskQueueOf(run.workflow, queues),
          priority: fairnessOf(run.labels.companyId),
          args: [run.input],
          workflowId: run.workflowId,
          typedSearchAttributes: searchAttributesOf(run.labels),
          staticSummary: run.summary,
        };
        await temporal.schedule.create({
          scheduleId,
          spec: { cronExpressions: [cron], timezone },
          action,
          policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day' },
          state: { note },
        });
      } catch (error) {
        if (error instanceof ServiceError && (error.cause as { code?: number } | undefined)?.code === GRPC_INVALID_ARGUMENT) {
          throw new ScheduleRefused(error.message, { cause: error });
        }
        throw error;
      }
    },
    async describe(scheduleId) {
      try {
        const { state, info } = await temporal.schedule.getHandle(scheduleId).describe();
        return { paused: state.paused, nextRunAt: info.nextActionTimes[0]?.toISOString() ?? null };
      } catch (error) {
        if (error instanceof ScheduleNotFoundError) return null;
        throw error;
      }
    },
    pause: (scheduleId, note) => onSchedule(scheduleId, (handle) => handle.pause(note)),
    unpause: (scheduleId, note) => onSchedule(scheduleId, (handle) => handle.unpause(note)),
    trigger: (scheduleId) => onSchedule(scheduleId, (handle) => handle.trigger(ScheduleOverlapPolicy.ALLOW_ALL)),
    async delete(scheduleId) {
      await temporal.schedule
        .getHandle(scheduleId)
        .delete()
        .catch((error: unknown) => {
          if (!(error instanceof ScheduleNotFoundError)) throw error;
        });
    },
  };
}

/**
 * The domain's WorkflowGateway, on Temporal: each run on its workflow's task queue, with its company's fairness key.
 * The gateway's signatures hold each call to its workflow's contract; here a workflow is started by its type name.
 */
export function temporalWorkflows(temporal: Client, queues: TaskQueues): WorkflowGateway {
  return {
    start: (start) =>
      inWorkflowSpan(start, 'start', async () => {
        try {
          await temporal.workflow.start(start.workflow.name, startOptions(start, queues));
        } catch (error) {
          throw domainError(error);
        }
      }),

    startAndAwait: <W extends WorkflowDef>(start: WorkflowStart<W>, waitMs: number) =>
      inWorkflowSpan(start, 'startAndAwait', async () => {
        const handle = await temporal.workflow.start(start.workflow.name, startOptions(start, queues));
        return awaitOutcome<ResultOf<W>>(handle, waitMs);
      }),

    signalAndAwait: <W extends WorkflowDef>(start: WorkflowStart<W>, signal: SignalDef, args: unknown[], waitMs: number) =>
      inWorkflowSpan(start, 'signalAndAwait', async () => {
        let handle;
        try {
          // A signal goes to the open run whatever the start says: there is no conflict to resolve.
          const { workflowIdConflictPolicy: _open, ...options } = startOptions(start, queues);
          handle = await temporal.workflow.signalWithStart(start.workflow.name, { ...options, signal: signal.name, signalArgs: args });
        } catch (error) {
          throw domainError(error);
        }
        return awaitOutcome<ResultOf<W>>(handle, waitMs);
      }),

    update: <W extends WorkflowDef, U extends UpdateDef>(start: WorkflowStart<W>, update: U, args: unknown[], waitMs: number) =>
      inWorkflowSpan(start, 'update', async () => {
        const answer = temporal.workflow.executeUpdateWithStart(update.name, {
          args,
          startWorkflowOperation: new WithStartWorkflowOperation(start.workflow.name, { ...startOptions(start, queues), workflowIdConflictPolicy: 'USE_EXISTING' }),
        });
        const timer = new AbortController();
        try {
          const answered = await Promise.race([answer.then((result) => ({ result: result as UpdateResultOf<U> })), delay(waitMs, null, { signal: timer.signal })]);
          // A worker may still take it later.
          if (!answered) answer.catch(() => undefined);
          return answered;
        } catch (error) {
          throw domainError(error);
        } finally {
          timer.abort();
        }
      }),

    schedules: temporalSchedules(temporal, queues),
  };
}
