/** What the delivery workflow takes and gives, and the failure types that cross from its activities. */

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
