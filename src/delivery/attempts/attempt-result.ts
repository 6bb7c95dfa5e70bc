import type { AttemptOutcome } from '../delivery-attempt.entity';
import type { EndpointVerdict } from '../endpoints/endpoint-admission';

/**
 * Why an attempt failed. `authentication`: the endpoint's credentials could not be had (its token endpoint failed);
 * `transformation`: the endpoint's transformation failed (../endpoints/endpoint-transformation.ts). Nothing was sent
 * for either.
 */
export type FailureKind = 'timeout' | 'connection' | 'blocked' | 'redirect' | 'http' | 'authentication' | 'transformation';

/**
 * What one attempt came to, in one shape from the sender to the record: the sender answers with it
 * (webhook-sender.ts), `classify` and the breaker's verdict (`verdictOf`, below) read it,
 * finish_delivery_attempt records it (attempt-statements.ts), and the run is told it as a made attempt.
 */
export interface AttemptResult {
  /** null when no response arrived. */
  statusCode: number | null;
  durationMs: number;
  /** null on a 2xx; otherwise a short description such as "HTTP 503" or "timed out after 30000 ms". */
  error: string | null;
  failureKind: FailureKind | null;
  /** The first RESPONSE_EXCERPT_BYTES of the response body (UTF-8, may be cut), or null when there was none. */
  responseExcerpt: string | null;
  /** A 429's or 503's Retry-After (seconds or an HTTP date), in milliseconds from now; null otherwise. */
  retryAfterMs: number | null;
}

export type FinishedOutcome = Exclude<AttemptOutcome, 'in_progress'>;

/**
 * An attempt made: its result, classified and recorded as attempt `attemptNumber`. Read back from its record (a
 * retry of its activity), its `failureKind` and `retryAfterMs` are null: the record keeps neither.
 */
export interface MadeAttempt extends AttemptResult {
  attemptNumber: number;
  outcome: FinishedOutcome;
  /** A retryable failure whose endpoint was disabled or deleted meanwhile: the next attempt is made at once (and fails). */
  endpointEnded?: true;
}

/** An attempt's record as read back: in progress, or finished. */
export interface RecordedAttempt {
  attemptNumber: number;
  outcome: AttemptOutcome;
  statusCode: number | null;
  error: string | null;
  durationMs: number | null;
  responseExcerpt: string | null;
}

/**
 * 2xx delivered; 4xx but 429 (and a target we refuse to contact, a transformation that failed: evaluated again it
 * fails again) permanent; 429, 5xx, 3xx, timeouts, network errors and
 * credentials that could not be had (a token endpoint failing) retried.
 */
export function classify(result: AttemptResult): FinishedOutcome {
  if (result.failureKind === null) return 'succeeded';
  if (result.failureKind === 'blocked' || result.failureKind === 'transformation') return 'permanent_failure';
  // 429 asks to come back later, unlike other 4xx (rules 6.3).
  if (result.failureKind === 'http' && result.statusCode !== null && result.statusCode < 500 && result.statusCode !== 429) return 'permanent_failure';
  return 'retryable_failure';
}

/** What an attempt to an endpoint that is not active comes to: a permanent failure, without sending. */
export function endpointNotActive(endpoint: { status: string; disabledReason: string | null }): AttemptResult {
  const reason = endpoint.disabledReason ? `: ${endpoint.disabledReason}` : '';
  return { statusCode: null, durationMs: 0, error: `endpoint is ${endpoint.status}${reason}`, failureKind: 'blocked', responseExcerpt: null, retryAfterMs: null };
}

/** The attempt made: its result and outcome as recorded; `endpointEnded` as finish_delivery_attempt saw the endpoint. */
export function madeAttempt(attemptNumber: number, result: AttemptResult, outcome: FinishedOutcome, endpointEnded: boolean): MadeAttempt {
  return { ...result, durationMs: Math.round(result.durationMs), attemptNumber, outcome, ...(endpointEnded ? { endpointEnded: true as const } : {}) };
}

/**
 * A finished attempt as its record tells it; `endpointEnded`: its endpoint is no longer active, which a retryable
 * failure passes on to its run.
 */
export function madeFromRecord(record: RecordedAttempt & { outcome: FinishedOutcome }, endpointEnded = false): MadeAttempt {
  return {
    statusCode: record.statusCode,
    durationMs: record.durationMs ?? 0,
    error: record.error,
    failureKind: null,
    responseExcerpt: record.responseExcerpt,
    retryAfterMs: null,
    attemptNumber: record.attemptNumber,
    outcome: record.outcome,
    ...(endpointEnded && record.outcome === 'retryable_failure' ? { endpointEnded: true as const } : {}),
  };
}

/** Timeouts, connection errors and 5xx count against the breaker; any other answer shows the endpoint is up. */
export function verdictOf(result: AttemptResult): EndpointVerdict {
  if (result.failureKind === null) return 'healthy';
  if (result.failureKind === 'timeout' || result.failureKind === 'connection') return 'failing';
  if (result.failureKind === 'http' && result.statusCode !== null) {
    if (result.statusCode >= 500) return 'failing';
    // A 429 asks to slow down (its Retry-After is honoured); it says nothing about whether the endpoint is up.
    return result.statusCode === 429 ? 'neutral' : 'healthy';
  }
  return 'neutral';
}
