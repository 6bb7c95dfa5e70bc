import type { EntityManager } from '@mikro-orm/postgresql';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { performance } from 'node:perf_hooks';
import { v7 as uuidv7 } from 'uuid';
import type { Config } from '../../config';
import type { SecretBox } from '../../crypto/secret-box';
import type { Orm } from '../../db/orm';
import { PreparedStatement } from '../../db/prepared-statement';
import type { Logger } from '../../logger';
import type { WorkerMetrics } from '../../metrics';
import { inSpan } from '../../observability/spans';
import { currentTraceId } from '../../observability/trace-context';
import type { AttemptOutcome } from '../delivery-attempt.entity';
import { deliveryHeaders, signingSecrets } from './delivery-headers';
import type { EndpointAuthentication } from '../endpoint-authentication';
import { type AttemptCredentials, type AttemptTime, CredentialsError, EndpointCredentials } from './endpoint-credentials';
import { type EndpointVerdict, HELD_RECHECK_MS, verdictOf } from './endpoint-admission';
import { disableEndpoint } from '../endpoints-service';
import type { CircuitState, EndpointStatus } from '../webhook-endpoint.entity';
import { PROGRESS_INTERVAL_MS, type WebhookResult, type WebhookSender } from './webhook-sender';
import type { AttemptTrigger, HoldReason } from '../../../workflows/webhook-delivery.contract';

/**
 * One attempt of a delivery, top-down: begin, send, finish. Two statements on the way (PL/pgSQL functions in
 * src/db/sql/functions/; each one round trip):
 *
 * 1. begin_delivery_attempt reads the delivery, its endpoint and its last attempt, takes the endpoint's rate slot and
 *    asks its admission (the cap on attempts in flight and the breaker: endpoint-admission.ts; on an endpoint ordered
 *    per record, its record's earlier deliveries: docs/ordering.md); a retry of an attempt already made is answered
 *    from its record.
 * 2. The signed POST through the SSRF guard (webhook-sender.ts), in the attempt's span; for an endpoint with
 *    authentication, with its headers, OAuth token and client certificate (endpoint-credentials.ts), all within the
 *    attempt's deadline.
 * 3. finish_delivery_attempt records the attempt and the delivery's state, the endpoint's failing streak, resolves the
 *    delivery's alerts once delivered, frees its slot and moves the breaker; it names the held deliveries to wake (and,
 *    once delivered, its record's next delivery waiting for it).
 * 4. Only after a failure, or when deliveries wait: the endpoint disabled (410 Gone, or failing too long), the held
 *    deliveries woken, the breaker's move logged.
 *
 * An attempt is recorded as in progress when it begins (markInProgress). It may be handed off: when its answer takes
 * longer than `handOffAfterMs`, it goes on in this process while the caller returns; `awaitOutcome` gives its outcome
 * later (here or, from the record, in any worker), as it does to a second execution of the same attempt.
 */

/** An attempt made: its record, as the workflow needs it. */
export interface MadeAttempt {
  outcome: Exclude<AttemptOutcome, 'in_progress'>;
  attemptNumber: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseExcerpt: string | null;
  /** The receiver's Retry-After on a 429 or 503, in milliseconds; null otherwise (and for an attempt read back from its record). */
  retryAfterMs: number | null;
  /** A retryable failure whose endpoint was disabled or deleted meanwhile: the next attempt is made at once (and fails). */
  endpointEnded?: true;
}

/** What came of asking for an attempt: made (or made before), handed off, or not made because the endpoint said wait. */
export type AttemptResult =
  | { kind: 'made'; attempt: MadeAttempt }
  | { kind: 'in_flight' }
  | { kind: 'throttled'; throttledForMs: number }
  | { kind: 'held'; heldForMs: number; reason: HoldReason };

export interface AttemptRequest {
  deliveryId: string;
  /** Sent as X-Webhook-Retry. */
  attemptNumber: number;
  trigger: AttemptTrigger;
  /** When the workflow will try again after a retryable failure; null when this is the last attempt. */
  nextAttemptInMs: number | null;
}

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
  last: { attemptNumber: number; outcome: AttemptOutcome; statusCode: number | null; error: string | null; durationMs: number | null; responseExcerpt: string | null } | null;
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
  };
  /** The endpoint's answer when asked: throttled by its rate limit, admitted (its slot taken) or held; null when not asked. */
  admission: { kind: 'throttled'; throttledForMs: number } | { kind: 'admitted' } | { kind: 'held'; heldForMs: number; reason: HoldReason } | null;
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
}

const BEGIN = new PreparedStatement<BeginRow>(
  'begin_delivery_attempt',
  'select * from begin_delivery_attempt($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)',
);

const FINISH = new PreparedStatement<{ transition: 'opened' | 'reopened' | 'closed' | null; wake: string[]; failing_ms: number | null; endpoint_ended: boolean | null }>(
  'finish_delivery_attempt',
  'select * from finish_delivery_attempt($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)',
);

/** The record's next delivery to the same endpoint, when it waits for this one (src/db/sql/functions/record_successor_to_wake.sql). */
const RECORD_SUCCESSOR = new PreparedStatement<{ wake: string[] }>('record_successor_to_wake', 'select record_successor_to_wake($1) as wake');

const RECORDED = new PreparedStatement<{
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

/** What to ask of the endpoint when beginning. */
export interface BeginOptions {
  /** The attempt to make; null: the next after the recorded ones. */
  attemptNumber: number | null;
  trigger: AttemptTrigger;
  /** Take a slot of the endpoint's per-second rate limit (an attempt about to be made). */
  takeRateSlot: boolean;
  /** Ask the endpoint to admit the attempt; false when it was admitted moments ago (its slot is held). */
  admit: boolean;
  /**
   * Record the attempt as in progress once admitted: shown so while the request is out, and a second execution of the
   * same attempt awaits it instead of sending it again.
   */
  markInProgress: boolean;
  /** Checked against the row: nothing is taken for a delivery that differs (the caller refuses it). */
  expected?: { companyId: string; endpointId: string; eventType: string };
}

/**
 * 2xx delivered; 4xx but 429 (and a target we refuse to contact) permanent; 429, 5xx, 3xx, timeouts, network errors and
 * credentials that could not be had (a token endpoint failing) retried.
 */
export function classify(result: WebhookResult): Exclude<AttemptOutcome, 'in_progress'> {
  if (result.failureKind === null) return 'succeeded';
  if (result.failureKind === 'blocked') return 'permanent_failure';
  // 429 asks to come back later, unlike other 4xx (rules 6.3).
  if (result.failureKind === 'http' && result.statusCode !== null && result.statusCode < 500 && result.statusCode !== 429) return 'permanent_failure';
  return 'retryable_failure';
}

export interface DeliveryAttemptsDeps {
  orm: Orm;
  secretBox: SecretBox;
  sender: WebhookSender;
  webhooks: Config['webhooks'];
  logger: Logger;
  metrics: WorkerMetrics;
  /** Wakes the runs of held deliveries (after the change that frees them has committed). */
  wake(endpointId: string, deliveryIds: string[]): Promise<void>;
  /** Ends what waits for an endpoint just disabled (releaseWaiting of endpoints-service.ts), after the change has committed. */
  releaseWaiting(endpointId: string): Promise<void>;
}

/** PostgreSQL's SQLSTATE for a statement cancelled to break a deadlock, and how often an attempt's statement meets one. */
const DEADLOCK_DETECTED = '40P01';
const DEADLOCK_TRIES = 3;

/** A worker's attempts: begun, sent and finished here, each kept until it is recorded (handed off or not). */
export class DeliveryAttempts {
  /** The attempts this process is making, by delivery and number: a second execution of one here awaits it. */
  private readonly making = new Map<string, Promise<MadeAttempt>>();
  /** For the pool's connections only: no entity is ever loaded into it, so one serves every attempt. */
  private readonly db: EntityManager;
  /** The worker's OAuth tokens, shared by its attempts. */
  private readonly credentials: EndpointCredentials;

  constructor(private readonly deps: DeliveryAttemptsDeps) {
    this.db = deps.orm.em.fork() as EntityManager;
    this.credentials = new EndpointCredentials(deps.sender, deps.secretBox);
  }

  /** Reads the delivery and asks its endpoint, in one statement; null when the delivery does not exist. */
  async begin(deliveryId: string, options: BeginOptions): Promise<BegunAttempt | null> {
    const { admission } = this.deps.webhooks;
    const [row] = await this.retryingDeadlocks('begin', () => BEGIN.rows(this.em(), [
      deliveryId,
      uuidv7(),
      options.attemptNumber,
      options.trigger,
      currentTraceId(),
      options.takeRateSlot,
      options.admit,
      options.markInProgress,
      options.expected?.companyId ?? null,
      options.expected?.endpointId ?? null,
      options.expected?.eventType ?? null,
      admission.maxInFlight,
      admission.slotLeaseMs,
      HELD_RECHECK_MS,
    ]));
    return row ? begunFrom(deliveryId, row) : null;
  }

  /**
   * Runs one of an attempt's statements again when PostgreSQL cancelled it to break a deadlock: its transaction was
   * rolled back whole, so running it again is safe. A safety net under the engine's lock order (README.md), counted in
   * webhook_attempt_deadlocks_total: a deadlock there is a bug to find.
   */
  private async retryingDeadlocks<T>(statement: 'begin' | 'finish', run: () => Promise<T>): Promise<T> {
    for (let tries = 1; ; tries++) {
      try {
        return await run();
      } catch (error) {
        if ((error as { code?: string }).code !== DEADLOCK_DETECTED || tries >= DEADLOCK_TRIES) throw error;
        this.deps.metrics.attemptDeadlocks.inc({ statement });
      }
    }
  }

  /**
   * Makes the begun attempt (admitted, or asked nothing of its endpoint) and records it. With `handOffAfterMs`, an
   * answer slower than that is awaited in the background (the attempt began recorded as in progress) and `in_flight` is
   * returned.
   */
  async make(begun: BegunAttempt, request: AttemptRequest, options: { handOffAfterMs?: number; onProgress?: () => void } = {}): Promise<AttemptResult> {
    const recorded = finishedAttempt(begun, request.attemptNumber);
    if (recorded) return { kind: 'made', attempt: recorded };
    if (begun.admission?.kind === 'throttled') return begun.admission;
    if (begun.admission?.kind === 'held') return begun.admission;
    const sending = this.sendAndFinish(begun, request, options.onProgress);
    const key = attemptKey(begun.deliveryId, request.attemptNumber);
    this.making.set(key, sending);
    const forget = () => {
      if (this.making.get(key) === sending) this.making.delete(key);
    };
    void sending.then(forget, forget);
    if (options.handOffAfterMs === undefined) return { kind: 'made', attempt: await sending };
    let timer: NodeJS.Timeout | undefined;
    const slow = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), options.handOffAfterMs);
    });
    const made = await Promise.race([sending, slow]);
    clearTimeout(timer);
    if (made) return { kind: 'made', attempt: made };
    sending.catch((error: unknown) => {
      this.deps.logger.error({ err: error, deliveryId: begun.deliveryId, attemptNumber: request.attemptNumber }, 'a handed-off attempt could not be recorded');
    });
    return { kind: 'in_flight' };
  }

  /**
   * The outcome of an attempt recorded in progress (handed off, or made by an execution of its activity that may still
   * be running): awaited here when this process makes it, else read from its record until it is finished. Null when no
   * process is making it any more (its record is still in progress well past any attempt's deadline, or there is none):
   * the caller makes it again.
   */
  async awaitOutcome(deliveryId: string, attemptNumber: number, heartbeat: () => void): Promise<MadeAttempt | null> {
    const here = this.making.get(attemptKey(deliveryId, attemptNumber));
    if (here) {
      const beating = setInterval(heartbeat, PROGRESS_INTERVAL_MS);
      try {
        return await here;
      } finally {
        clearInterval(beating);
      }
    }
    // Recorded as in progress when it began, so its answer came within the attempt's deadline of that; a record still in
    // progress well after is one whose worker stopped.
    const abandonedAfterMs = this.deps.webhooks.timeoutMs + ABANDONED_MARGIN_MS;
    for (;;) {
      const [row] = await RECORDED.rows(this.em(), [deliveryId, attemptNumber]);
      if (!row || (row.outcome === 'in_progress' && row.age_ms > abandonedAfterMs)) return null;
      if (row.outcome !== 'in_progress') {
        const recorded = { attemptNumber, outcome: row.outcome, statusCode: row.status_code, durationMs: row.duration_ms, error: row.error, responseExcerpt: row.response_excerpt };
        return madeFromRecord(recorded, row.endpoint_ended);
      }
      heartbeat();
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  /**
   * The delivery ended without being delivered (failed for good, cancelled): on an endpoint ordered per record, the
   * record's next delivery, waiting for it, goes now. A delivered one's finish wakes it.
   */
  async ended(deliveryId: string, endpointId: string): Promise<void> {
    const [row] = await RECORD_SUCCESSOR.rows(this.em(), [deliveryId]);
    if (row?.wake.length) await this.deps.wake(endpointId, row.wake);
  }

  /** Settles once every attempt being made has been recorded (a worker stopping waits for those handed off). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.making.values()]);
  }

  private async sendAndFinish(begun: BegunAttempt, request: AttemptRequest, onProgress: (() => void) | undefined): Promise<MadeAttempt> {
    const { endpoint } = begun;
    const active = endpoint.status === 'active';
    const result = active ? await this.send(begun, request, onProgress) : endpointNotActive(endpoint);
    const outcome = classify(result);
    const verdict: EndpointVerdict = verdictOf(result);
    const { admission } = this.deps.webhooks;
    const gone = active && result.statusCode === 410;
    const [finished] = await this.retryingDeadlocks('finish', () => FINISH.rows(this.em(), [
      begun.deliveryId,
      uuidv7(),
      request.attemptNumber,
      request.trigger,
      currentTraceId(),
      outcome,
      result.statusCode,
      Math.round(result.durationMs),
      result.error,
      result.responseExcerpt,
      request.nextAttemptInMs,
      // What says nothing of the endpoint (our refusal to contact it) or ends it (410) is not a failing streak.
      active && outcome !== 'succeeded' && result.failureKind !== 'blocked' && !gone,
      active,
      verdict,
      admission.failureThreshold,
      admission.cooldownMs,
      admission.maxCooldownMs,
      admission.maxInFlight,
    ]));
    await this.afterFinish(begun, result, finished ?? null);
    if (active || result.durationMs > 0) {
      this.deps.metrics.attemptDuration.observe({ endpoint_host: new URL(endpoint.url).hostname, outcome }, result.durationMs / 1000);
    }
    return {
      outcome,
      attemptNumber: request.attemptNumber,
      statusCode: result.statusCode,
      durationMs: Math.round(result.durationMs),
      error: result.error,
      responseExcerpt: result.responseExcerpt,
      retryAfterMs: result.retryAfterMs,
      ...(finished?.endpoint_ended ? { endpointEnded: true as const } : {}),
    };
  }

  /** The signed POST of the delivery's stored body, in the attempt's span. */
  private send(begun: BegunAttempt, request: AttemptRequest, onProgress: (() => void) | undefined): Promise<WebhookResult> {
    const { endpoint } = begun;
    const attributes = {
      'company.id': begun.companyId,
      'webhook.delivery_id': begun.deliveryId,
      'webhook.endpoint_id': begun.endpointId,
      'webhook.event_type': begun.eventType,
      'webhook.attempt_number': request.attemptNumber,
      'webhook.trigger': request.trigger,
      // The endpoint by its host only: a URL's path or query may hold a token. Neither the body nor a signature.
      'server.address': new URL(endpoint.url).hostname,
      'http.request.method': 'POST',
    };
    // The request carries this span's trace context to the endpoint (the sender sends the active span's).
    return inSpan('webhook attempt', { kind: SpanKind.CLIENT, attributes }, async (span) => {
      const signed = deliveryHeaders(signingSecrets(endpoint, this.deps.secretBox), { id: begun.deliveryId, eventType: begun.eventType, payload: begun.payload }, request.attemptNumber);
      const result = endpoint.authentication
        ? await this.sendAuthenticated(begun, endpoint.authentication, signed, onProgress)
        : await this.deps.sender.send({ url: endpoint.url, body: begun.payload, headers: signed, onProgress });
      if (result.statusCode !== null) span.setAttribute('http.response.status_code', result.statusCode);
      if (result.failureKind !== null) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.setAttribute('error.type', result.failureKind);
      }
      return result;
    });
  }

  /**
   * The signed POST with the endpoint's credentials, all of it within WEBHOOK_TIMEOUT_MS. A token that cannot be had
   * fails the attempt, saying why; a 401 to a token gets one more try with a new token (it may have been revoked).
   */
  private async sendAuthenticated(begun: BegunAttempt, authentication: EndpointAuthentication, signed: Record<string, string>, onProgress: (() => void) | undefined): Promise<WebhookResult> {
    const started = performance.now();
    const time: AttemptTime = { deadline: started + this.deps.webhooks.timeoutMs, onProgress };
    const send = (credentials: AttemptCredentials) =>
      this.deps.sender.send({
        url: begun.endpoint.url,
        body: begun.payload,
        headers: { ...credentials.headers, ...signed },
        clientCertificate: credentials.clientCertificate,
        timeoutMs: Math.max(1, Math.round(time.deadline - performance.now())),
        onProgress,
      });
    try {
      const credentials = await this.credentials.forAttempt(begun.endpointId, authentication, time);
      let result = await send(credentials);
      if (result.statusCode === 401 && credentials.token !== null) {
        result = await send(await this.credentials.afterUnauthorized(begun.endpointId, authentication, credentials, time));
      }
      return { ...result, durationMs: Math.round(performance.now() - started) };
    } catch (error) {
      if (!(error instanceof CredentialsError)) throw error;
      return { statusCode: null, durationMs: Math.round(performance.now() - started), error: error.message, failureKind: 'authentication', responseExcerpt: null, retryAfterMs: null };
    }
  }

  /** What only a failure or waiting deliveries need: the endpoint disabled, held deliveries woken, the breaker's move logged. */
  private async afterFinish(begun: BegunAttempt, result: WebhookResult, finished: { transition: 'opened' | 'reopened' | 'closed' | null; wake: string[]; failing_ms: number | null } | null): Promise<void> {
    const { endpointId, endpoint } = begun;
    let disabled = false;
    if (endpoint.status === 'active') {
      const em = this.em();
      if (result.statusCode === 410) {
        disabled = await disableEndpoint(em, this.deps.logger, endpointId, `The endpoint answered 410 Gone at ${new Date().toISOString()}`);
      } else if (finished?.failing_ms !== null && finished?.failing_ms !== undefined && finished.failing_ms >= this.deps.webhooks.disableAfterMs) {
        const hours = Math.round(finished.failing_ms / 360_000) / 10;
        disabled = await disableEndpoint(em, this.deps.logger, endpointId, `Every attempt failed for ${hours} h, the WEBHOOK_DISABLE_AFTER limit; the last: ${result.error ?? 'unknown error'}`);
      }
    }
    // A disabled endpoint holds nobody: what waits for it makes its attempt, which fails for good, now.
    if (disabled) await this.deps.releaseWaiting(endpointId);
    else if (finished?.wake.length) await this.deps.wake(endpointId, finished.wake);
    if (finished?.transition) {
      this.deps.metrics.circuitTransitions.inc({ to: finished.transition === 'closed' ? 'closed' : 'open' });
      this.deps.logger.info(
        { endpointId, companyId: begun.companyId, circuit: finished.transition, lastError: result.error },
        `circuit breaker of endpoint ${endpointId} ${finished.transition}`,
      );
    }
  }

  private em(): EntityManager {
    return this.db;
  }
}

/** How long past its deadline a handed-off attempt may take to be recorded before it counts as abandoned. */
const ABANDONED_MARGIN_MS = 15_000;

const attemptKey = (deliveryId: string, attemptNumber: number) => `${deliveryId}/${attemptNumber}`;

/** The attempt asked for, when it was made already (a retry of its activity): answered from its record. */
function finishedAttempt(begun: BegunAttempt, attemptNumber: number): MadeAttempt | null {
  const { last } = begun;
  if (!last || last.attemptNumber !== attemptNumber || last.outcome === 'in_progress') return null;
  return madeFromRecord({ ...last, outcome: last.outcome });
}

/**
 * An attempt as its record tells it (the receiver's Retry-After is not kept); `endpointEnded`: its endpoint is no longer
 * active, which a retryable failure passes on to its run.
 */
function madeFromRecord(record: NonNullable<BegunAttempt['last']> & { outcome: MadeAttempt['outcome'] }, endpointEnded = false): MadeAttempt {
  return {
    outcome: record.outcome,
    attemptNumber: record.attemptNumber,
    statusCode: record.statusCode,
    durationMs: record.durationMs ?? 0,
    error: record.error,
    responseExcerpt: record.responseExcerpt,
    retryAfterMs: null,
    ...(endpointEnded && record.outcome === 'retryable_failure' ? { endpointEnded: true as const } : {}),
  };
}

/** What an attempt to an endpoint that is not active comes to: a permanent failure, without sending. */
function endpointNotActive(endpoint: BegunAttempt['endpoint']): WebhookResult {
  const reason = endpoint.disabledReason ? `: ${endpoint.disabledReason}` : '';
  return { statusCode: null, durationMs: 0, error: `endpoint is ${endpoint.status}${reason}`, failureKind: 'blocked', responseExcerpt: null, retryAfterMs: null };
}

const dateOf = (text: string | null) => (text === null ? null : new Date(text));

function begunFrom(deliveryId: string, row: BeginRow): BegunAttempt {
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
    },
    admission,
  };
}
