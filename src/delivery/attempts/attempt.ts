import type { EntityManager } from '@mikro-orm/postgresql';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { performance } from 'node:perf_hooks';
import { v7 as uuidv7 } from 'uuid';
import type { Config } from '../../config';
import type { SecretBox } from '../../crypto/secret-box';
import type { Orm } from '../../db/orm';
import type { Logger } from '../../logger';
import type { WorkerMetrics } from '../../metrics';
import { inSpan } from '../../observability/spans';
import { currentTraceId } from '../../observability/trace-context';
import type { EndpointAuthentication } from '../endpoints/endpoint-authentication';
import { disableEndpoint } from '../endpoints/endpoints-service';
import { type AttemptResult, classify, endpointNotActive, type FinishedOutcome, type MadeAttempt, madeAttempt, madeFromRecord, verdictOf } from './attempt-result';
import { BEGIN, type BegunAttempt, begunFrom, FINISH, type Finished, RECORD_SUCCESSOR, RECORDED } from './attempt-statements';
import { type OutgoingRequest, preparedRequest, transformationFailed } from './attempt-request';
import { deliveryHeaders, signingSecrets } from './delivery-headers';
import { CompiledTransformations } from '../endpoints/endpoint-transformation';
import { type AttemptCredentials, type AttemptTime, CredentialsError, EndpointCredentials } from './endpoint-credentials';
import { HELD_RECHECK_MS } from '../endpoints/endpoint-admission';
import { PROGRESS_INTERVAL_MS, type WebhookSender } from './webhook-sender';
import type { AttemptTrigger, HoldReason } from '../../../workflows/webhook-delivery.contract';

/**
 * One attempt of a delivery, top-down, each step a function below in the order it runs (README.md):
 *
 * 1. begin: begin_delivery_attempt reads the delivery, its endpoint and its last attempt, takes the endpoint's rate
 *    slot and asks its admission (../endpoints/endpoint-admission.ts); a retry of an attempt already made is answered from its record.
 * 2. make: an attempt admitted (or asked nothing) is sent and finished, here or handed off to go on in this process.
 * 3. send: the signed POST through the SSRF guard (webhook-sender.ts), in the attempt's span; for an endpoint with
 *    authentication, with its headers, OAuth token and client certificate (endpoint-credentials.ts), all within the
 *    attempt's deadline. Its answer is the attempt's result (attempt-result.ts), which `classify` gives an outcome.
 * 4. finish: finish_delivery_attempt records the result and the delivery's state, the endpoint's failing streak,
 *    resolves the delivery's alerts once delivered, frees its slot and moves the breaker; it names the held deliveries
 *    to wake (and, once delivered, its record's next delivery waiting for it).
 * 5. afterFinish, only after a failure or when deliveries wait: the endpoint disabled (410 Gone, or failing too long),
 *    the held deliveries woken, the breaker's move logged.
 *
 * An attempt is recorded as in progress when it begins (markInProgress). It may be handed off: when its answer takes
 * longer than `handOffAfterMs`, it goes on in this process while the caller returns; `awaitOutcome` gives its outcome
 * later (here or, from the record, in any worker), as it does to a second execution of the same attempt.
 */

/** What came of asking for an attempt: made (or made before), handed off, or not made because the endpoint said wait. */
export type AttemptAnswer =
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

/** How long past its deadline a handed-off attempt may take to be recorded before it counts as abandoned. */
const ABANDONED_MARGIN_MS = 15_000;

const attemptKey = (deliveryId: string, attemptNumber: number) => `${deliveryId}/${attemptNumber}`;

/** A worker's attempts: begun, sent and finished here, each kept until it is recorded (handed off or not). */
export class DeliveryAttempts {
  /** The attempts this process is making, by delivery and number: a second execution of one here awaits it. */
  private readonly making = new Map<string, Promise<MadeAttempt>>();
  /** For the pool's connections only: no entity is ever loaded into it, so one serves every attempt. */
  private readonly db: EntityManager;
  /** The worker's OAuth tokens, shared by its attempts. */
  private readonly credentials: EndpointCredentials;
  /** The endpoints' transformations, each compiled once per endpoint version. */
  private readonly transformations: CompiledTransformations;

  constructor(private readonly deps: DeliveryAttemptsDeps) {
    this.db = deps.orm.em.fork() as EntityManager;
    this.credentials = new EndpointCredentials(deps.sender, deps.secretBox);
    this.transformations = new CompiledTransformations(deps.webhooks.transformation, deps.metrics);
  }

  /** 1. Reads the delivery and asks its endpoint, in one statement; null when the delivery does not exist. */
  async begin(deliveryId: string, options: BeginOptions): Promise<BegunAttempt | null> {
    const { admission } = this.deps.webhooks;
    const [row] = await this.retryingDeadlocks('begin', () =>
      BEGIN.rows(this.db, {
        p_delivery: deliveryId,
        p_attempt_id: uuidv7(),
        p_attempt_number: options.attemptNumber,
        p_trigger: options.trigger,
        p_trace_id: currentTraceId(),
        p_take_rate_slot: options.takeRateSlot,
        p_admit: options.admit,
        p_mark_in_progress: options.markInProgress,
        p_expected_company: options.expected?.companyId ?? null,
        p_expected_endpoint: options.expected?.endpointId ?? null,
        p_expected_event_type: options.expected?.eventType ?? null,
        p_max_in_flight: admission.maxInFlight,
        p_slot_lease_ms: admission.slotLeaseMs,
        p_recheck_ms: HELD_RECHECK_MS,
      }),
    );
    return row ? begunFrom(deliveryId, row) : null;
  }

  /**
   * 2. Makes the begun attempt (admitted, or asked nothing of its endpoint) and records it. With `handOffAfterMs`, an
   * answer slower than that is awaited in the background (the attempt began recorded as in progress) and `in_flight` is
   * returned.
   */
  async make(begun: BegunAttempt, request: AttemptRequest, options: { handOffAfterMs?: number; onProgress?: () => void } = {}): Promise<AttemptAnswer> {
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
   * The attempt's steps from its request to its record: send (or not, to an endpoint not active, or when its
   * transformation fails: attempt-request.ts), classify, finish.
   */
  private async sendAndFinish(begun: BegunAttempt, request: AttemptRequest, onProgress: (() => void) | undefined): Promise<MadeAttempt> {
    const { endpoint } = begun;
    const active = endpoint.status === 'active';
    const prepared = active ? await preparedRequest(this.db, this.transformations, begun, request) : null;
    const result = !prepared ? endpointNotActive(endpoint) : prepared.ok ? await this.send(begun, request, prepared.request, onProgress) : transformationFailed(prepared.error);
    const outcome = classify(result);
    const finished = await this.finish(begun, request, result, outcome);
    await this.afterFinish(begun, result, finished);
    if ((active || result.durationMs > 0) && result.failureKind !== 'transformation') {
      this.deps.metrics.attemptDuration.observe({ endpoint_host: new URL(endpoint.url).hostname, outcome }, result.durationMs / 1000);
    }
    return madeAttempt(request.attemptNumber, result, outcome, finished?.endpoint_ended === true);
  }

  /** 3. The signed POST of the delivery's stored body (or what its transformation made of it), in the attempt's span. */
  private send(begun: BegunAttempt, request: AttemptRequest, outgoing: OutgoingRequest, onProgress: (() => void) | undefined): Promise<AttemptResult> {
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
      const signed = deliveryHeaders(signingSecrets(endpoint, this.deps.secretBox), { id: begun.deliveryId, eventType: begun.eventType, payload: outgoing.payload }, request.attemptNumber);
      const result = endpoint.authentication
        ? await this.sendAuthenticated(begun, endpoint.authentication, outgoing, signed, onProgress)
        : await this.deps.sender.send({ url: outgoing.url, body: outgoing.payload, headers: { ...outgoing.headers, ...signed }, onProgress });
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
  private async sendAuthenticated(
    begun: BegunAttempt,
    authentication: EndpointAuthentication,
    outgoing: OutgoingRequest,
    signed: Record<string, string>,
    onProgress: (() => void) | undefined,
  ): Promise<AttemptResult> {
    const started = performance.now();
    const time: AttemptTime = { deadline: started + this.deps.webhooks.timeoutMs, onProgress };
    const send = (credentials: AttemptCredentials) =>
      this.deps.sender.send({
        url: outgoing.url,
        body: outgoing.payload,
        headers: { ...outgoing.headers, ...credentials.headers, ...signed },
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

  /** 4. Records the attempt's result, in one statement; null when the delivery is gone. */
  private async finish(begun: BegunAttempt, request: AttemptRequest, result: AttemptResult, outcome: FinishedOutcome): Promise<Finished | null> {
    const { admission } = this.deps.webhooks;
    const active = begun.endpoint.status === 'active';
    const gone = active && result.statusCode === 410;
    const [finished] = await this.retryingDeadlocks('finish', () =>
      FINISH.rows(this.db, {
        p_delivery: begun.deliveryId,
        p_attempt_id: uuidv7(),
        p_attempt_number: request.attemptNumber,
        p_trigger: request.trigger,
        p_trace_id: currentTraceId(),
        p_outcome: outcome,
        p_status_code: result.statusCode,
        p_duration_ms: Math.round(result.durationMs),
        p_error: result.error,
        p_response_excerpt: result.responseExcerpt,
        p_next_attempt_in_ms: request.nextAttemptInMs,
        // What says nothing of the endpoint (our refusal to contact it, its transformation failing) or ends it (410) is not a failing streak.
        p_counts_against_endpoint: active && outcome !== 'succeeded' && result.failureKind !== 'blocked' && result.failureKind !== 'transformation' && !gone,
        p_settle: active,
        p_verdict: verdictOf(result),
        p_failure_threshold: admission.failureThreshold,
        p_cooldown_ms: admission.cooldownMs,
        p_max_cooldown_ms: admission.maxCooldownMs,
        p_max_in_flight: admission.maxInFlight,
      }),
    );
    return finished ?? null;
  }

  /** 5. What only a failure or waiting deliveries need: the endpoint disabled, held deliveries woken, the breaker's move logged. */
  private async afterFinish(begun: BegunAttempt, result: AttemptResult, finished: Finished | null): Promise<void> {
    const { endpointId, endpoint } = begun;
    let disabled = false;
    if (endpoint.status === 'active') {
      if (result.statusCode === 410) {
        disabled = await disableEndpoint(this.db, this.deps.logger, endpointId, `The endpoint answered 410 Gone at ${new Date().toISOString()}`);
      } else if (finished?.failing_ms !== null && finished?.failing_ms !== undefined && finished.failing_ms >= this.deps.webhooks.disableAfterMs) {
        const hours = Math.round(finished.failing_ms / 360_000) / 10;
        disabled = await disableEndpoint(this.db, this.deps.logger, endpointId, `Every attempt failed for ${hours} h, the WEBHOOK_DISABLE_AFTER limit; the last: ${result.error ?? 'unknown error'}`);
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
      const [row] = await RECORDED.rows(this.db, [deliveryId, attemptNumber]);
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
    const [row] = await RECORD_SUCCESSOR.rows(this.db, [deliveryId]);
    if (row?.wake.length) await this.deps.wake(endpointId, row.wake);
  }

  /** Settles once every attempt being made has been recorded (a worker stopping waits for those handed off). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.making.values()]);
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
}

/** The attempt asked for, when it was made already (a retry of its activity): answered from its record. */
function finishedAttempt(begun: BegunAttempt, attemptNumber: number): MadeAttempt | null {
  const { last } = begun;
  if (!last || last.attemptNumber !== attemptNumber || last.outcome === 'in_progress') return null;
  return madeFromRecord({ ...last, outcome: last.outcome });
}
