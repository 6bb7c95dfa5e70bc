import { context } from '@opentelemetry/api';
import { setTimeout as delay } from 'node:timers/promises';
import {
  type Client,
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateStage,
  type WorkflowHandle,
} from '@temporalio/client';
import { deliveryWorkflowId, type RerunRequest, WEBHOOK_DELIVERY, WEBHOOK_DELIVERY_START } from '../../workflows/webhook-delivery.contract';
import { temporalSignal, temporalUpdate } from '../../workflows/messages';
import { DELIVERY_RECOVERY, recoveryWorkflowId } from '../../workflows/delivery-recovery.contract';
import { inSpan } from '../observability/spans';
import { contextOf, linksTo } from '../observability/trace-context';
import { type DeliveryToStart, type DeliveryWorkflows, type RerunRequested, RerunRefused } from '../delivery/delivery-workflows';
import { fairnessOf } from './fairness';
import { resultWithin } from './result-within';
import { COMPANY_ID, DELIVERY_STATUS, ENDPOINT_HOST, ENDPOINT_ID, EVENT_ID, EVENT_TYPE } from '../../workflows/search-attributes';
import type { TaskQueues } from '../task-queues';
import { taskQueueOf } from './task-queue-of';

/** How many times a re-run request looks again when the run changes under it. */
const RERUN_ROUNDS = 5;

/**
 * Starts the delivery's workflow with the search attributes operators filter by in the Temporal UI and a
 * one-line summary; false when a run with its id is there already (open, or closed under REJECT_DUPLICATE).
 * `reuse` REJECT_DUPLICATE for a first start; ALLOW_DUPLICATE to start a re-run after it closed.
 */
async function startDeliveryRun(
  temporal: Client,
  queues: TaskQueues,
  delivery: DeliveryToStart,
  reuse: 'REJECT_DUPLICATE' | 'ALLOW_DUPLICATE',
  eager = false,
): Promise<boolean> {
  const { input } = delivery;
  try {
    await temporal.workflow.start(WEBHOOK_DELIVERY.name, {
      taskQueue: taskQueueOf(WEBHOOK_DELIVERY, queues),
      // The run's first workflow task comes back in the start's answer to this process's Worker when it has a free
      // slot: no trip through the task queue for the task that makes most deliveries.
      requestEagerStart: eager,
      priority: fairnessOf(input.companyId),
      workflowId: deliveryWorkflowId(input.deliveryId),
      args: [input, WEBHOOK_DELIVERY_START],
      workflowIdReusePolicy: reuse,
      // A run that used up the delivery's attempts fails (Failed in the UI); this retry starts the run that
      // stays open waiting for a re-run, right away. The waiting run is never retried.
      retry: { maximumAttempts: 2, initialInterval: '1 second' },
      typedSearchAttributes: [
        { key: COMPANY_ID, value: input.companyId },
        { key: ENDPOINT_ID, value: input.endpointId },
        { key: ENDPOINT_HOST, value: new URL(delivery.endpointUrl).hostname },
        { key: EVENT_TYPE, value: input.eventType },
        ...(delivery.eventId ? [{ key: EVENT_ID, value: delivery.eventId }] : []),
        { key: DELIVERY_STATUS, value: 'pending' },
      ],
      // No static details: each run's copy of them cost the dev server a tenth of a delivery's CPU (docs/benchmarks.md);
      // what to do about a run says its current details once it retries or fails, and the update "rerun" its description.
      staticSummary: `${input.eventType} → ${delivery.endpointUrl}`,
    });
    return true;
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw error;
  }
}

async function rerunOpenRun(handle: WorkflowHandle, request: RerunRequest, waitMs: number): Promise<RerunRequested> {
  const update = await handle.startUpdate(temporalUpdate(WEBHOOK_DELIVERY.updates.rerun), { args: [request], waitForStage: WorkflowUpdateStage.ACCEPTED });
  if (waitMs <= 0) return { via: 'update', result: null };
  // The attempt may outlast the wait (a database outage retries it): the caller then answers "still going".
  const stopWaiting = new AbortController();
  // Its poll is aborted when we stop waiting (see resultWithin): the update goes on in the run regardless.
  const outcome = handle.client.withAbortSignal(stopWaiting.signal, () => update.result()).catch(() => null);
  const deadline = delay(waitMs, null, { signal: stopWaiting.signal }).catch(() => null);
  const result = await Promise.race([outcome, deadline]);
  stopWaiting.abort();
  return { via: 'update', result };
}

/** DeliveryWorkflows.requestRerun: the update "rerun" to the open run, or a new run once it has closed. */
async function requestRerunOf(temporal: Client, queues: TaskQueues, delivery: DeliveryToStart, request: RerunRequest, waitMs: number): Promise<RerunRequested> {
  const handle = temporal.workflow.getHandle(deliveryWorkflowId(delivery.input.deliveryId));
  // Each round follows a change made by someone else meanwhile (a run that closed, or one another caller started).
  for (let round = 1; ; round++) {
    let running: boolean;
    try {
      running = (await handle.describe()).status.name === 'RUNNING';
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
      running = false;
    }
    if (running) {
      try {
        return await rerunOpenRun(handle, request, waitMs);
      } catch (error) {
        if (error instanceof WorkflowUpdateFailedError) throw new RerunRefused(error.cause?.message ?? error.message, { cause: error });
        // The run closed between our look and our call (a test delivery's run ends after its attempt): a new
        // run makes the attempt.
        if (!(error instanceof WorkflowNotFoundError) || round >= RERUN_ROUNDS) throw error;
        continue;
      }
    }
    // Someone else started a run between our look and our start: the update goes to that run (at the last round,
    // that run's attempt is this request's too).
    if ((await startDeliveryRun(temporal, queues, delivery, 'ALLOW_DUPLICATE')) || round >= RERUN_ROUNDS) return { via: 'new_run' };
  }
}

/**
 * DeliveryWorkflows on Temporal: each run on its workflow's task queue (the deliveries queue), with its company's
 * fairness key. `eagerStart` for a client on a Worker's connection (src/worker/worker.ts): runs it starts ask for
 * their first task in the start's answer.
 */
export function temporalDeliveryWorkflows(temporal: Client, queues: TaskQueues, options: { eagerStart?: boolean } = {}): DeliveryWorkflows {
  const eager = options.eagerStart === true;
  return {
    // In the trace the delivery was made in: the client's tracing interceptor carries it into the run's headers.
    start: (delivery) =>
      delivery.trace
        ? context.with(contextOf(delivery.trace), () => startDeliveryRun(temporal, queues, delivery, 'REJECT_DUPLICATE', eager))
        : startDeliveryRun(temporal, queues, delivery, 'REJECT_DUPLICATE', eager),

    // A trace of its own (the caller's: a request, or a bulk recovery's run) that links to the delivery's.
    requestRerun: (delivery, request, waitMs) =>
      inSpan(
        'webhook delivery rerun',
        { links: linksTo(delivery.trace), attributes: { 'company.id': delivery.input.companyId, 'webhook.delivery_id': delivery.input.deliveryId } },
        () => requestRerunOf(temporal, queues, delivery, request, waitMs),
      ),

    closedWithin(deliveryId, ms) {
      return resultWithin(temporal.workflow.getHandle(deliveryWorkflowId(deliveryId)), ms).then(
        ({ finished }) => finished,
        (error: unknown) => {
          if (error instanceof WorkflowFailedError) return true;
          throw error;
        },
      );
    },

    async wake(deliveryIds) {
      const gone = await Promise.all(
        deliveryIds.map((id) =>
          temporal.workflow
            .getHandle(deliveryWorkflowId(id))
            .signal(temporalSignal(WEBHOOK_DELIVERY.signals.endpointReady))
            .then(
              () => null,
              (error: unknown) => {
                if (error instanceof WorkflowNotFoundError) return id;
                throw error;
              },
            ),
        ),
      );
      return gone.filter((id) => id !== null);
    },

    async endpointEnded(deliveryIds) {
      await Promise.all(
        deliveryIds.map((id) =>
          temporal.workflow
            .getHandle(deliveryWorkflowId(id))
            .signal(temporalSignal(WEBHOOK_DELIVERY.signals.endpointEnded))
            .catch((error: unknown) => {
              // A run that closed meanwhile has nothing left to wait for.
              if (!(error instanceof WorkflowNotFoundError)) throw error;
            }),
        ),
      );
    },

    async startRecovery(input, companyId, summary) {
      await temporal.workflow.start(DELIVERY_RECOVERY.name, {
        taskQueue: taskQueueOf(DELIVERY_RECOVERY, queues),
        priority: fairnessOf(companyId),
        workflowId: recoveryWorkflowId(input.recoveryId),
        args: [input],
        staticSummary: summary,
      });
    },
  };
}
