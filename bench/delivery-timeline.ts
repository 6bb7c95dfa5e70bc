import type { Client as TemporalClient } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import type { Pool } from 'pg';
import { deliveryWorkflowId } from '../workflows/webhook-delivery.contract';

/** One delivery, as the benchmark made it: its event, when its commit returned and when the receiver had it (ms since the epoch). */
export interface DeliveredEvent {
  eventId: string;
  committedAt: number;
  receivedAt: number;
}

/** The steps of one delivery, in order, each as ms after its event's commit returned. */
export const TIMELINE_STEPS = [
  ['written', 'the dispatcher wrote the delivery (its row, committed before the run starts)'],
  ['runStarted', 'Temporal recorded the run (WorkflowExecutionStarted)'],
  ['firstTaskStarted', 'a worker took its first workflow task (in the start\'s answer: eager start)'],
  ['received', 'the receiver had the request (the first attempt, made by that task\'s local activity)'],
  ['firstTaskCompleted', 'that task completed: the attempt recorded, the run closed'],
] as const;

export type TimelineStep = (typeof TIMELINE_STEPS)[number][0];
export type Timeline = Record<TimelineStep, number>;

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const millis = (event: HistoryEvent | undefined): number => {
  if (!event?.eventTime) return Number.NaN;
  return Number(event.eventTime.seconds) * 1000 + Math.floor((event.eventTime.nanos ?? 0) / 1e6);
};

/**
 * Where one delivery's time went, from the records it left: the outbox row and the delivery row in PostgreSQL, the
 * run's history in Temporal (event times are the server's), and the receiver's clock; all on one machine.
 */
export async function timelineOf(db: Pool, temporal: TemporalClient, delivered: DeliveredEvent): Promise<Timeline> {
  const { rows } = await db.query<{ id: string; created_at: Date }>('select id, created_at from webhook_deliveries where event_id = $1', [delivered.eventId]);
  const [row] = rows;
  if (!row) throw new Error(`no delivery of event ${delivered.eventId}`);
  const run = temporal.workflow.getHandle(deliveryWorkflowId(row.id));
  await run.result();
  const history = await run.fetchHistory();
  const events = history.events ?? [];
  const first = (has: (event: HistoryEvent) => unknown) => events.find((event) => has(event));
  const since = (at: number) => at - delivered.committedAt;
  return {
    written: since(row.created_at.getTime()),
    runStarted: since(millis(first((e) => e.workflowExecutionStartedEventAttributes))),
    firstTaskStarted: since(millis(first((e) => e.workflowTaskStartedEventAttributes))),
    received: since(delivered.receivedAt),
    firstTaskCompleted: since(millis(first((e) => e.workflowTaskCompletedEventAttributes))),
  };
}

/** The median of each step over `timelines`. */
export function medianTimeline(timelines: Timeline[]): Timeline {
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
  };
  return Object.fromEntries(TIMELINE_STEPS.map(([step]) => [step, median(timelines.map((timeline) => timeline[step]))])) as Timeline;
}
