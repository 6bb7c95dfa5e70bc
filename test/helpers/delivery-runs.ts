import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { deliveryWorkflowId } from '../../workflows/webhook-delivery.contract';
import { waitFor } from './processes';
import type { TestStack } from './stack';

export interface DeliveryRun {
  runId: string;
  status: string;
}

/** Every run of a delivery's workflow, oldest first, as the UI lists them for `WorkflowId = "…"`. */
export async function runsOf(stack: TestStack, deliveryId: string): Promise<DeliveryRun[]> {
  const runs: DeliveryRun[] = [];
  for await (const execution of stack.temporal.workflow.list({ query: `WorkflowId = "${deliveryWorkflowId(deliveryId)}"` })) {
    runs.push({ runId: execution.runId, status: execution.status.name });
  }
  return runs.reverse();
}

/** Waits until the delivery has `count` runs and none of them is open. */
export async function closedRuns(stack: TestStack, deliveryId: string, count: number): Promise<DeliveryRun[]> {
  return waitFor(
    async () => {
      const runs = await runsOf(stack, deliveryId);
      return runs.length === count && runs.every((r) => r.status !== 'RUNNING') && runs;
    },
    30_000,
    `${count} closed runs of delivery ${deliveryId}`,
  );
}

export type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

export async function historyOf(stack: TestStack, deliveryId: string, runId?: string): Promise<HistoryEvent[]> {
  const history = await stack.temporal.workflow.getHandle(deliveryWorkflowId(deliveryId), runId).fetchHistory();
  return history.events ?? [];
}

/**
 * The failures of a run's attempts, as the UI shows them, in order: the first attempt's as its run's first task made it
 * (a failed local activity), every later one's as a failed activity.
 */
export function attemptFailuresOf(events: HistoryEvent[]): temporal.api.failure.v1.IFailure[] {
  return events
    .map((event) => event.markerRecordedEventAttributes?.failure ?? event.activityTaskFailedEventAttributes?.failure)
    .filter((failure): failure is temporal.api.failure.v1.IFailure => failure?.applicationFailureInfo?.type === 'DeliveryAttemptFailed');
}

/** The first payload of a failure's details, decoded. */
export function failureDetails(failure: temporal.api.failure.v1.IFailure | null | undefined): any {
  const payload = failure?.applicationFailureInfo?.details?.payloads?.[0];
  return payload ? defaultPayloadConverter.fromPayload(payload) : undefined;
}

/** The input a run was started with (what the UI's "Start Workflow Like This One" copies). */
export function startInput(events: HistoryEvent[]): unknown {
  const payload = events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  return payload ? defaultPayloadConverter.fromPayload(payload) : undefined;
}

/** Replays the histories with the workflow code of this tree (the bundle global setup built): throws on any nondeterminism. */
export async function replayWithCurrentCode(histories: { workflowId: string; events: HistoryEvent[] }[]): Promise<void> {
  for (const { workflowId, events } of histories) {
    await Worker.runReplayHistory({ workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! } }, { events }, workflowId);
  }
}
