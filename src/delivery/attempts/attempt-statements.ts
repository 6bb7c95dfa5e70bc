import { FunctionCall, PreparedStatement } from '../../db/prepared-statement';
import type { AttemptOutcome } from '../delivery-attempt.entity';
import type { EndpointAuthentication } from '../endpoints/endpoint-authentication';
import type { Transformation, TransformedRequest } from '../endpoints/endpoint-transformation';
import type { CircuitState, EndpointStatus } from '../endpoints/webhook-endpoint.entity';
import type { RecordedAttempt } from './attempt-result';
import type { EndpointVerdict } from '../endpoints/endpoint-admission';
import type { AttemptTrigger, HoldReason } from '../../../workflows/webhook-delivery.contract';

/*
 * An attempt's statements (PL/pgSQL functions in src/db/sql/functions/, each one round trip), called by their
 * parameters' names: what attempt.ts passes them and what they answer.
 */

/** begin_delivery_attempt's arguments. */
export interface BeginArgs extends Record<string, unknown> {
  p_delivery: string;
  p_attempt_id: string;
  /** The attempt to make; null: the next after the recorded ones. */
  p_attempt_number: number | null;
  p_trigger: AttemptTrigger;
  p_trace_id: string | null;
  p_take_rate_slot: boolean;
  p_admit: boolean;
  p_mark_in_progress: boolean;
  p_expected_company: string | null;
  p_expected_endpoint: string | null;
  p_expected_event_type: string | null;
  p_max_in_flight: number;
  p_slot_lease_ms: number;
  p_recheck_ms: number;
}

interface BeginRow {
  company_id: string;
  endpoint_id: string;
  event_id: string | null;
  event_type: string;
  payload: string;
  is_test: boolean;
  status: string;
  /** Timestamps come as PostgreSQL's text (the ORM's connections keep them so). */
  delivered_at: string | null;
  attempt_number: number;
  last_attempt_number: number | null;
  last_outcome: AttemptOutcome | null;
  last_status_code: number | null;
  last_error: string | null;
  last_duration_ms: number | null;
  last_response_excerpt: string | null;
  url: string;
  endpoint_status: EndpointStatus;
  disabled_reason: string | null;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: string | null;
  endpoint_failing: boolean;
  circuit_state: CircuitState;
  auth_headers: EndpointAuthentication['authHeaders'];
  oauth: EndpointAuthentication['oauth'];
  client_certificate: string | null;
  client_key_sealed: string | null;
  throttled_for_ms: number | null;
  admitted: boolean | null;
  held_reason: HoldReason | null;
  held_for_ms: number | null;
  transformation: Transformation | null;
  endpoint_updated_at: string;
  transformed_payload: string | null;
  transformed_headers: Record<string, string> | null;
  transformed_path: string | null;
}

/**
 * Reads the delivery, its endpoint and its last attempt, takes the endpoint's rate slot and asks its admission (the cap
 * on attempts in flight and the breaker: ../endpoints/endpoint-admission.ts; on an endpoint ordered per record, its record's earlier
 * deliveries: docs/ordering.md), and records the attempt in progress; a retry of an attempt already made is answered
 * from its record.
 */
export const BEGIN = new FunctionCall<BeginArgs, BeginRow>('begin_delivery_attempt', [
  'p_delivery',
  'p_attempt_id',
  'p_attempt_number',
  'p_trigger',
  'p_trace_id',
  'p_take_rate_slot',
  'p_admit',
  'p_mark_in_progress',
  'p_expected_company',
  'p_expected_endpoint',
  'p_expected_event_type',
  'p_max_in_flight',
  'p_slot_lease_ms',
  'p_recheck_ms',
]);

/** finish_delivery_attempt's arguments: the attempt's result as the record keeps it, and the endpoint's settings. */
export interface FinishArgs extends Record<string, unknown> {
  p_delivery: string;
  p_attempt_id: string;
  p_attempt_number: number;
  p_trigger: AttemptTrigger;
  p_trace_id: string | null;
  p_outcome: AttemptOutcome;
  p_status_code: number | null;
  p_duration_ms: number;
  p_error: string | null;
  p_response_excerpt: string | null;
  /** When the run tries again after a retryable failure; null when this is the last attempt. */
  p_next_attempt_in_ms: number | null;
  /** A failure that says the endpoint is failing (its streak, WEBHOOK_DISABLE_AFTER). */
  p_counts_against_endpoint: boolean;
  /** Free the attempt's slot and move the breaker (an active endpoint's attempt). */
  p_settle: boolean;
  p_verdict: EndpointVerdict;
  p_failure_threshold: number;
  p_cooldown_ms: number;
  p_max_cooldown_ms: number;
  p_max_in_flight: number;
}

/** What finishing changed: the breaker's move, the deliveries to wake, how long the endpoint has been failing. */
export interface Finished {
  transition: 'opened' | 'reopened' | 'closed' | null;
  wake: string[];
  failing_ms: number | null;
  endpoint_ended: boolean | null;
}

/**
 * Records the attempt and the delivery's state, the endpoint's failing streak, resolves the delivery's alerts once
 * delivered, frees its slot and moves the breaker; names the held deliveries to wake (and, once delivered, its
 * record's next delivery waiting for it).
 */
export const FINISH = new FunctionCall<FinishArgs, Finished>('finish_delivery_attempt', [
  'p_delivery',
  'p_attempt_id',
  'p_attempt_number',
  'p_trigger',
  'p_trace_id',
  'p_outcome',
  'p_status_code',
  'p_duration_ms',
  'p_error',
  'p_response_excerpt',
  'p_next_attempt_in_ms',
  'p_counts_against_endpoint',
  'p_settle',
  'p_verdict',
  'p_failure_threshold',
  'p_cooldown_ms',
  'p_max_cooldown_ms',
  'p_max_in_flight',
]);

/** The record's next delivery to the same endpoint, when it waits for this one (src/db/sql/functions/record_successor_to_wake.sql). */
export const RECORD_SUCCESSOR = new PreparedStatement<{ wake: string[] }>('record_successor_to_wake', 'select record_successor_to_wake($1) as wake');

/** Records what the endpoint's transformation made of the delivery (null, null, null: none), which its attempts send. */
export const RECORD_TRANSFORMED = new PreparedStatement<Record<string, never>>(
  'record_transformed_delivery',
  'update webhook_deliveries set transformed_payload = $2, transformed_headers = $3::jsonb, transformed_path = $4 where id = $1',
);

/** An attempt's record, its age, and whether its endpoint is still active. */
export const RECORDED = new PreparedStatement<{
  outcome: AttemptOutcome;
  status_code: number | null;
  duration_ms: number | null;
  error: string | null;
  response_excerpt: string | null;
  age_ms: number;
  endpoint_ended: boolean;
}>(
  'recorded_delivery_attempt',
  `select a.outcome, a.status_code, a.duration_ms, a.error, a.response_excerpt, (extract(epoch from clock_timestamp() - a.created_at) * 1000)::float8 as age_ms,
          e.status <> 'active' as endpoint_ended
     from webhook_delivery_attempts a join webhook_deliveries d on d.id = a.delivery_id join webhook_endpoints e on e.id = d.endpoint_id
    where a.delivery_id = $1 and a.attempt_number = $2`,
);

/** The delivery, its endpoint and its last attempt as begin_delivery_attempt read them, with the endpoint's answer. */
export interface BegunAttempt {
  deliveryId: string;
  companyId: string;
  endpointId: string;
  eventId: string | null;
  eventType: string;
  payload: string;
  isTest: boolean;
  status: string;
  deliveredAt: Date | null;
  /** The attempt this one is: the one asked for, or the next after the recorded ones (an unfinished last one is made again). */
  attemptNumber: number;
  last: RecordedAttempt | null;
  endpoint: {
    url: string;
    status: EndpointStatus;
    disabledReason: string | null;
    secretSealed: string;
    previousSecretSealed: string | null;
    previousSecretExpiresAt: Date | null;
    /** Its attempts have been failing (a streak since the last success). */
    failing: boolean;
    circuitState: CircuitState;
    /** Its headers, OAuth 2.0 and client certificate, secrets sealed; null when it has none. */
    authentication: EndpointAuthentication | null;
    /** Its transformation as saved now, and the version it is of (its updated_at) for the compiled ones' cache. */
    transformation: Transformation | null;
    updatedAt: string;
  };
  /** What a transformation made of the delivery's payload before (its first attempt, a re-run); null when none did. */
  transformed: TransformedRequest | null;
  /** The endpoint's answer when asked: throttled by its rate limit, admitted (its slot taken) or held; null when not asked. */
  admission: { kind: 'throttled'; throttledForMs: number } | { kind: 'admitted' } | { kind: 'held'; heldForMs: number; reason: HoldReason } | null;
}

const dateOf = (text: string | null) => (text === null ? null : new Date(text));

export function begunFrom(deliveryId: string, row: BeginRow): BegunAttempt {
  const admission: BegunAttempt['admission'] =
    row.throttled_for_ms !== null
      ? { kind: 'throttled', throttledForMs: row.throttled_for_ms }
      : row.admitted === true
        ? { kind: 'admitted' }
        : row.admitted === false
          ? { kind: 'held', heldForMs: row.held_for_ms!, reason: row.held_reason! }
          : null;
  return {
    deliveryId,
    companyId: row.company_id,
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    eventType: row.event_type,
    payload: row.payload,
    isTest: row.is_test,
    status: row.status,
    deliveredAt: dateOf(row.delivered_at),
    attemptNumber: row.attempt_number,
    last:
      row.last_attempt_number === null
        ? null
        : {
            attemptNumber: row.last_attempt_number,
            outcome: row.last_outcome!,
            statusCode: row.last_status_code,
            error: row.last_error,
            durationMs: row.last_duration_ms,
            responseExcerpt: row.last_response_excerpt,
          },
    endpoint: {
      url: row.url,
      status: row.endpoint_status,
      disabledReason: row.disabled_reason,
      secretSealed: row.secret_sealed,
      previousSecretSealed: row.previous_secret_sealed,
      previousSecretExpiresAt: dateOf(row.previous_secret_expires_at),
      failing: row.endpoint_failing,
      circuitState: row.circuit_state,
      authentication:
        row.auth_headers || row.oauth || row.client_certificate
          ? { authHeaders: row.auth_headers, oauth: row.oauth, clientCertificate: row.client_certificate, clientKeySealed: row.client_key_sealed }
          : null,
      transformation: row.transformation,
      updatedAt: row.endpoint_updated_at,
    },
    transformed:
      row.transformed_payload === null ? null : { payload: row.transformed_payload, headers: row.transformed_headers ?? {}, path: row.transformed_path },
    admission,
  };
}
