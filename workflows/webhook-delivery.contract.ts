import { signal, update, workflowDef } from '../src/domain/workflow-contract';

/**
 * The delivery workflow: one event to one endpoint, one run at a time per delivery (id `webhook-delivery/<delivery
 * id>`), on the deliveries task queue. Started by the outbox dispatcher, a test send and re-runs
 * (src/temporal/temporal-delivery-workflows.ts). What it takes and gives, its update, and the failure types that
 * cross from its activities.
 */
export const WEBHOOK_DELIVERY = workflowDef<WebhookDeliveryInput, WebhookDeliveryResult>()({
  name: 'webhookDelivery',
  taskQueue: 'deliveries',
  /**
   * endpointReady: sent to a held delivery when its endpoint lets attempts through again (a slot freed, the breaker
   * closed, the endpoint was disabled): it tries its attempt now instead of at the end of its wait. endpointEnded:
   * sent to a delivery waiting for its next retry when its endpoint was disabled or deleted: it makes that attempt
   * now, which fails for good without sending (the endpoint is not active), instead of waiting up to hours to learn it.
   */
  signals: { endpointReady: signal(), endpointEnded: signal() },
  /**
   * rerun: re-runs a delivery now with the same X-Webhook-ID and answers with the attempt it made. Sent by
   * POST /webhook-deliveries/{id}/retry, the bulk recovery, or from the Temporal UI ("Send an Update").
   */
  updates: { rerun: update<[RerunRequest], RerunResult>() },
});

export const DELIVERY_STATUSES = ['pending', 'retrying', 'delivered', 'failed', 'cancelled'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
/**
 * Why an attempt waits without being made: the endpoint's breaker is open, its attempts in flight are at the cap, or
 * (an endpoint ordered per record) an earlier delivery of the same record has not been delivered or failed for good.
 */
export const HOLD_REASONS = ['circuit_open', 'endpoint_busy', 'awaiting_predecessor'] as const;
export type HoldReason = (typeof HOLD_REASONS)[number];
/** What made an attempt: the run's schedule, a re-run asked for, or a test send. */
export type AttemptTrigger = 'automatic' | 'manual' | 'test';

/** One workflow per delivery, named after it, so a delivery is never started twice. */
export const deliveryWorkflowId = (deliveryId: string) => `webhook-delivery/${deliveryId}`;

/**
 * Names the delivery; the run checks every field against the database and is refused when one differs, so a
 * run started by hand cannot send something else than the delivery its id names.
 */
export interface WebhookDeliveryInput {
  deliveryId: string;
  companyId: string;
  endpointId: string;
  eventType: string;
}

/**
 * The run's second argument, given by the service's starts (src/temporal/temporal-delivery-workflows.ts): this run makes
 * its first attempt in its first workflow task. Said at the start rather than with a patch marker, whose
 * TemporalChangeVersion search attribute costs the server a visibility write per run; runs started before it (and by
 * hand without it) are told apart by their markers.
 */
export interface WebhookDeliveryStart {
  firstAttemptInFirstTask: true;
}

export const WEBHOOK_DELIVERY_START: WebhookDeliveryStart = { firstAttemptInFirstTask: true };

export interface WebhookDeliveryResult {
  status: 'delivered';
  /** Attempts made by then, this run's and earlier runs'. */
  attempts: number;
}

/** An attempt that failed and may be retried on the schedule (5xx, 429, 3xx, timeouts, connection errors). */
export const ATTEMPT_FAILED = 'DeliveryAttemptFailed';
/** An attempt that failed for good (4xx, a refused target, a disabled endpoint). */
export const ATTEMPT_REJECTED = 'DeliveryAttemptRejected';
/** The delivery used up its attempts; the run fails with this type. */
export const DELIVERY_FAILED = 'DeliveryFailed';
/** The run was started with an input that does not match the database, or for a delivery already delivered. */
export const DELIVERY_RUN_REFUSED = 'DeliveryRunRefused';

/** Carried by an attempt's failure (and the run's): what the UI shows of it, and what the schedule needs. */
export interface AttemptFailure {
  attemptNumber: number;
  statusCode: number | null;
  /** e.g. "HTTP 503", "connect ECONNREFUSED 127.0.0.1:443", "timed out after 30000 ms". */
  error: string;
  durationMs: number;
  /** The first 1 KiB of the response body. */
  responseExcerpt: string | null;
  /** The receiver's Retry-After on a 429 or 503, in milliseconds. */
  retryAfterMs: number | null;
  /** The endpoint was disabled or deleted while the attempt was made: the next one is made at once, and fails without sending. */
  endpointEnded?: true;
}

/** How a run goes, decided from the database when it begins. */
export interface DeliveryRunPlan {
  /**
   * schedule: the delivery has not been attempted: the whole schedule. rerun: it has (a re-run started by REST,
   * the bulk recovery or "Start Workflow Like This One"): one attempt. await_rerun: the previous run of this
   * workflow failed the delivery (Temporal started this one to keep it open): wait for a re-run. test: a test
   * send: one attempt, no alert.
   */
  mode: 'schedule' | 'rerun' | 'await_rerun' | 'test';
  /** X-Webhook-Retry of this run's first attempt: the number of attempts already recorded. */
  nextAttemptNumber: number;
  retryDelaysMs: number[];
  /** The longest wait of the schedule: a receiver's Retry-After is honoured up to it. */
  longestDelayMs: number;
  rerunWaitMs: number;
  endpointHost: string;
  eventId: string | null;
  /** The last recorded failure, for the run's details when it begins with one. */
  lastFailure: AttemptFailure | null;
  /**
   * Asked for by a run that plans with admission (`admit`): the endpoint's answer for the first attempt. Null when
   * admitted (its slot is taken) or not asked; otherwise the run waits, as for a held attempt, before asking again.
   */
  hold: { heldForMs: number; reason: HoldReason } | null;
  /**
   * The endpoint admitted the first attempt (its slot is taken): that attempt's activity need not ask again. Absent in
   * plans made before it was recorded.
   */
  admitted?: boolean;
}

/**
 * How the run's first workflow task left its first attempt (makeFirstAttempt, a local activity that plans the run and
 * makes the attempt when its endpoint answers promptly): delivered; made and still awaiting its answer (handed off to
 * the activity awaitDeliveryAttempt); admitted, to be made by sendDeliveryAttempt (its endpoint has been failing, so
 * the attempt does not hold the run's workflow task while it may hang); held or throttled by the endpoint; or not
 * begun (a run waiting for a re-run). An attempt that failed fails the local activity, as sendDeliveryAttempt does,
 * with the plan as its failure's second detail.
 */
export type FirstAttempt =
  | { kind: 'delivered'; statusCode: number; durationMs: number }
  | { kind: 'in_flight' }
  | { kind: 'admitted' }
  | { kind: 'held'; heldForMs: number; reason: HoldReason }
  | { kind: 'throttled'; throttledForMs: number }
  | { kind: 'none' };

export interface DeliveryRunStart {
  plan: DeliveryRunPlan;
  first: FirstAttempt;
}

/** The wait before the next attempt: the schedule's, or longer when the receiver asks, but never past the longest one. */
export function waitBeforeNextAttempt(scheduledMs: number, retryAfterMs: number | null, longestDelayMs: number): number {
  if (retryAfterMs === null || retryAfterMs <= scheduledMs) return scheduledMs;
  return Math.min(retryAfterMs, Math.max(longestDelayMs, scheduledMs));
}

/** One line for the UI: "HTTP 503 after 12 ms: {"error":"down"}". */
export function describeFailure(failure: AttemptFailure): string {
  const excerpt = failure.responseExcerpt?.replace(/\s+/g, ' ').trim();
  return `${failure.error} after ${failure.durationMs} ms${excerpt ? `: ${excerpt.length > 200 ? `${excerpt.slice(0, 200)}…` : excerpt}` : ''}`;
}

/** Input of a re-run; the Temporal UI sends it as JSON, e.g. {"reason": "endpoint fixed"}. */
export interface RerunRequest {
  reason?: string;
}

/** What a re-run did: its one attempt. */
export interface RerunResult {
  attemptNumber: number;
  delivered: boolean;
  statusCode: number | null;
  error: string | null;
}

export const RERUN_UPDATE_DESCRIPTION =
  'Re-run this webhook delivery now, keeping its X-Webhook-ID, and show the attempt it made. Input (optional): ' +
  '{"reason": "why"}. A failed delivery gets one more attempt; one waiting for its next retry makes it at once.';

const MAX_REASON_LENGTH = 500;

/** Refuses a re-run request that is not `{}` or `{"reason": "<up to 500 characters>"}`; the UI shows the message. */
export function checkRerunRequest(request: unknown): void {
  if (request === undefined || request === null) return;
  if (typeof request !== 'object' || Array.isArray(request)) {
    throw new TypeError('The input must be a JSON object such as {"reason": "endpoint fixed"}');
  }
  const unknown = Object.keys(request).filter((key) => key !== 'reason');
  if (unknown.length > 0) throw new TypeError(`Unknown field ${unknown.map((k) => `"${k}"`).join(', ')}: the only field is "reason"`);
  const { reason } = request as { reason?: unknown };
  if (reason !== undefined && (typeof reason !== 'string' || reason.length > MAX_REASON_LENGTH)) {
    throw new TypeError(`"reason" must be a string of at most ${MAX_REASON_LENGTH} characters`);
  }
}
