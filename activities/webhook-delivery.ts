import { ApplicationFailure, Context } from '@temporalio/activity';
import { DeliveryAttempt, type AttemptTrigger } from '../src/delivery/delivery-attempt.entity';
import { markFailed, resolveDeliveryAlerts } from '../src/delivery/alerts';
import { classify, endpointNotActive, inAttemptSpan, recordEndpointHealth, takeRateSlot } from '../src/delivery/attempts';
import { admitAttempt, allHeld, clearHold, settleAttempt, verdictOf, wakeHeld } from '../src/delivery/endpoint-admission';
import { type HoldReason, WebhookDelivery } from '../src/delivery/webhook-delivery.entity';
import { currentTraceId } from '../src/observability/trace-context';
import { isUuid } from '../src/schemas/formats';
import { deliveryHeaders, signingSecrets } from '../src/delivery/delivery-headers';
import type { WebhookResult } from '../src/delivery/webhook-sender';
import {
  ATTEMPT_FAILED,
  ATTEMPT_REJECTED,
  type AttemptFailure,
  DELIVERY_RUN_REFUSED,
  deliveryWorkflowId,
  type DeliveryRunPlan,
  describeFailure,
  type WebhookDeliveryInput,
} from '../workflows/webhook-delivery.contract';
import type { ActivityDeps } from './deps';

/** About 25 minutes of activity retries (1 s doubling to 1 min) before a missing delivery is given up. */
const MISSING_DELIVERY_ATTEMPTS = 30;
const INPUT_FIELDS = ['deliveryId', 'companyId', 'endpointId', 'eventType'] as const;
const UUID_FIELDS = ['deliveryId', 'companyId', 'endpointId'] as const;

const refuse = (message: string) => ApplicationFailure.create({ type: DELIVERY_RUN_REFUSED, message, nonRetryable: true });

export interface SendAttemptInput {
  deliveryId: string;
  /** Sent as X-Webhook-Retry. */
  attemptNumber: number;
  trigger: AttemptTrigger;
  /** When the workflow will try again after a retryable failure; null when this is the last attempt. */
  nextAttemptInMs: number | null;
  /** The run's plan admitted this attempt moments ago (it holds the endpoint's slot): its first try does not ask again. */
  admitted?: boolean;
}

/**
 * A delivered attempt; or none made, because the endpoint's rate limit has no slot for this long, or because the
 * endpoint holds it (src/delivery/endpoint-admission.ts): the run waits up to `heldForMs` or until it is woken.
 */
export type SendAttemptResult = { statusCode: number; durationMs: number } | { throttledForMs: number } | { heldForMs: number; reason: HoldReason };

/** The input's fields that differ from the delivery's row, as "field: given ≠ stored". */
function inputMismatches(input: WebhookDeliveryInput, delivery: WebhookDelivery): string[] {
  const stored: WebhookDeliveryInput = { deliveryId: delivery.id, companyId: delivery.company.id, endpointId: delivery.endpoint.id, eventType: delivery.eventType };
  return INPUT_FIELDS.filter((field) => input[field] !== stored[field]).map((field) => `${field}: ${JSON.stringify(input[field])} ≠ ${JSON.stringify(stored[field])}`);
}

/** What is wrong with the shape of a run's input (it may have been typed by hand); null when nothing is. */
function inputShapeProblem(input: unknown): string | null {
  const expected = `{${INPUT_FIELDS.map((f) => `"${f}"`).join(', ')}}`;
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return `The input must be an object ${expected}`;
  const keys = Object.keys(input);
  const wrong = keys.filter((key) => !(INPUT_FIELDS as readonly string[]).includes(key));
  const missing = INPUT_FIELDS.filter((field) => typeof (input as Record<string, unknown>)[field] !== 'string');
  if (wrong.length || missing.length) {
    return `The input must be ${expected} (strings)${wrong.length ? `; unknown: ${wrong.join(', ')}` : ''}${missing.length ? `; missing or not a string: ${missing.join(', ')}` : ''}`;
  }
  const notIds = UUID_FIELDS.filter((field) => !isUuid((input as WebhookDeliveryInput)[field]));
  return notIds.length ? `${notIds.join(', ')} must be UUIDs` : null;
}

function failureOf(attempt: DeliveryAttempt, retryAfterMs: number | null = null): AttemptFailure {
  return {
    attemptNumber: attempt.attemptNumber,
    statusCode: attempt.statusCode,
    error: attempt.error ?? 'unknown error',
    durationMs: attempt.durationMs ?? 0,
    responseExcerpt: attempt.responseExcerpt,
    retryAfterMs,
  };
}

/** The attempt's outcome as the workflow takes it: a result when delivered, a failed activity otherwise. */
function settle(attempt: DeliveryAttempt, retryAfterMs: number | null = null): SendAttemptResult {
  if (attempt.outcome === 'succeeded') return { statusCode: attempt.statusCode!, durationMs: attempt.durationMs ?? 0 };
  const failure = failureOf(attempt, retryAfterMs);
  throw ApplicationFailure.create({
    type: attempt.outcome === 'permanent_failure' ? ATTEMPT_REJECTED : ATTEMPT_FAILED,
    message: describeFailure(failure),
    details: [failure],
    nonRetryable: true,
    // Expected outcomes of talking to someone else's server: not logged by the worker as its own errors.
    category: 'BENIGN',
  });
}

export function createDeliveryRunActivities({ orm, logger, secretBox, sender, webhooks, metrics, deliveryWorkflows }: ActivityDeps) {
  /** Wakes held deliveries after the change that frees them has committed; a failure leaves them to their own timers. */
  const wake = async (endpointId: string, deliveryIds: string[]) => {
    if (deliveryIds.length === 0) return;
    await wakeHeld(orm.em.fork(), deliveryWorkflows, endpointId, deliveryIds).catch((error: unknown) =>
      logger.warn({ err: error, deliveryIds }, 'could not wake held deliveries; they look again on their own'),
    );
  };

  return {
    /**
     * Checks the run's input against the database (a run started by hand with another delivery's fields is refused)
     * and plans the run from what is recorded: the whole schedule for a delivery not yet attempted, one attempt
     * numbered after the recorded ones for a re-run, or waiting for a re-run after a failed run. With `admit`, also
     * asks the endpoint to admit the first attempt (src/delivery/endpoint-admission.ts), so that a delivery its
     * endpoint holds waits from its first workflow task: the run's plan is a local activity, and a burst behind a
     * dead endpoint costs the server one workflow task per delivery instead of three and two activity tasks.
     */
    async beginDeliveryRun({ input, workflowId, runAttempt, admit = false }: { input: WebhookDeliveryInput; workflowId: string; runAttempt: number; admit?: boolean }): Promise<DeliveryRunPlan> {
      const shapeProblem = inputShapeProblem(input);
      if (shapeProblem) throw refuse(shapeProblem);
      if (workflowId !== deliveryWorkflowId(input.deliveryId)) {
        throw refuse(`The workflow id ${workflowId} does not name delivery ${input.deliveryId} (expected ${deliveryWorkflowId(input.deliveryId)})`);
      }
      const em = orm.em.fork();
      const delivery = await em.findOne(WebhookDelivery, { id: input.deliveryId }, { populate: ['endpoint'] });
      // The dispatcher starts workflows just before it commits the rows: retry for a while, then give up.
      if (!delivery) {
        const message = `Delivery ${input.deliveryId} does not exist`;
        if (Context.current().info.attempt >= MISSING_DELIVERY_ATTEMPTS) throw refuse(message);
        throw new Error(`${message} (yet)`);
      }
      const mismatches = inputMismatches(input, delivery);
      if (mismatches.length) throw refuse(`The input does not match delivery ${delivery.id} in the database: ${mismatches.join('; ')}`);
      if (delivery.status === 'delivered') throw refuse(`Delivery ${delivery.id} was delivered at ${delivery.deliveredAt?.toISOString()}; there is nothing to re-run`);

      const [last] = await em.find(DeliveryAttempt, { delivery }, { orderBy: { attemptNumber: 'desc' }, limit: 1 });
      const mode: DeliveryRunPlan['mode'] = delivery.isTest ? 'test' : runAttempt > 1 ? 'await_rerun' : last ? 'rerun' : 'schedule';
      const endpoint = delivery.endpoint.getEntity();
      const admission = admit && (mode === 'schedule' || mode === 'rerun') && endpoint.status === 'active' ? await admitAttempt(em, webhooks.admission, endpoint.id, delivery.id) : null;
      return {
        mode,
        nextAttemptNumber: last ? last.attemptNumber + 1 : 0,
        retryDelaysMs: webhooks.retryDelaysMs,
        longestDelayMs: Math.max(0, ...webhooks.retryDelaysMs),
        rerunWaitMs: webhooks.rerunWaitMs,
        endpointHost: new URL(endpoint.url).hostname,
        eventId: delivery.event?.id ?? null,
        lastFailure: last && last.outcome !== 'succeeded' && last.outcome !== 'in_progress' ? failureOf(last) : null,
        hold: admission && !admission.admitted ? { heldForMs: admission.retryInMs, reason: admission.reason } : null,
        admitted: admission?.admitted === true,
      };
    },

    /**
     * One signed POST of the delivery's stored body, recorded as attempt `attemptNumber`. A 2xx returns; anything
     * else fails the activity for good with the attempt's status code, error, duration and response excerpt. The
     * record of a finished attempt is never rewritten: a retry of this activity after the attempt finished
     * answers from it; one after a crash mid-attempt (record still in progress) sends again and finishes it.
     */
    async sendDeliveryAttempt(input: SendAttemptInput): Promise<SendAttemptResult> {
      const em = orm.em.fork();
      const delivery = await em.findOneOrFail(WebhookDelivery, { id: input.deliveryId }, { populate: ['endpoint'] });
      const existing = await em.findOne(DeliveryAttempt, { delivery, attemptNumber: input.attemptNumber });
      if (existing && existing.outcome !== 'in_progress') return settle(existing);
      const endpoint = delivery.endpoint.getEntity();
      if (endpoint.status === 'active' && !existing) {
        const throttledForMs = await takeRateSlot(em, endpoint);
        if (throttledForMs !== null) return { throttledForMs };
      }
      // A test send is how a subscriber checks a fixed endpoint: it goes out even past an open breaker.
      if (endpoint.status === 'active' && !delivery.isTest) {
        // A retry of this activity (its worker died) asks again, which renews the slot's lease; asking with the slot
        // held admits, so the first try skips the transaction.
        if (!(input.admitted && !existing && Context.current().info.attempt === 1)) {
          const admission = await admitAttempt(em, webhooks.admission, endpoint.id, delivery.id);
          if (!admission.admitted) return { heldForMs: admission.retryInMs, reason: admission.reason };
        }
      } else {
        await clearHold(em, delivery.id);
      }

      const attempt =
        existing ??
        em.create(DeliveryAttempt, { company: delivery.company, delivery, attemptNumber: input.attemptNumber, trigger: input.trigger, traceId: currentTraceId() });
      Object.assign(delivery, { status: delivery.status === 'pending' ? 'pending' : 'retrying', nextAttemptAt: null });
      // Visible as in progress while the request is out.
      await em.flush();

      const endpointHost = new URL(endpoint.url).hostname;
      const result: WebhookResult =
        endpoint.status === 'active'
          ? await inAttemptSpan(
              { companyId: delivery.company.id, deliveryId: delivery.id, endpointId: endpoint.id, endpointHost, eventType: delivery.eventType, attemptNumber: input.attemptNumber, trigger: input.trigger },
              () =>
                sender.send({
                  url: endpoint.url,
                  body: delivery.payload,
                  headers: deliveryHeaders(signingSecrets(endpoint, secretBox), delivery, input.attemptNumber),
                  onProgress: () => Context.current().heartbeat(),
                }),
            )
          : endpointNotActive(endpoint);
      // 429 asks to come back later, unlike other 4xx (rules 6.3); 410 says the endpoint is gone for good.
      const outcome = result.statusCode === 429 ? 'retryable_failure' : classify(result);
      const now = new Date();
      Object.assign(attempt, { outcome, statusCode: result.statusCode, durationMs: Math.round(result.durationMs), error: result.error, responseExcerpt: result.responseExcerpt, finishedAt: now });
      Object.assign(delivery, {
        attemptCount: Math.max(delivery.attemptCount, input.attemptNumber + 1),
        lastAttemptAt: now,
        lastStatusCode: result.statusCode,
        lastError: result.error,
        nextAttemptAt: outcome === 'retryable_failure' && input.nextAttemptInMs !== null ? new Date(now.getTime() + input.nextAttemptInMs) : null,
      });
      if (outcome === 'succeeded') {
        Object.assign(delivery, { status: 'delivered', deliveredAt: now, failedAt: null });
      } else if (outcome === 'retryable_failure' && input.nextAttemptInMs !== null) {
        delivery.status = 'retrying';
      }
      const { transition, wake: toWake } = await em.transactional(async (tx) => {
        await tx.flush();
        const disabled = await recordEndpointHealth(tx, endpoint, outcome === 'succeeded', result, webhooks.disableAfterMs, logger);
        if (outcome === 'succeeded') await resolveDeliveryAlerts(tx, delivery.id);
        if (endpoint.status !== 'active') return { transition: null, wake: [] };
        const settlement = await settleAttempt(tx, webhooks.admission, endpoint.id, { deliveryId: delivery.id, attemptNumber: input.attemptNumber }, verdictOf(result));
        // A disabled endpoint holds nobody: each held delivery makes its attempt, which fails for good, now.
        return disabled ? { ...settlement, wake: await allHeld(tx, endpoint.id) } : settlement;
      });
      await wake(endpoint.id, toWake);
      if (transition) {
        metrics.circuitTransitions.inc({ to: transition === 'closed' ? 'closed' : 'open' });
        logger.info({ endpointId: endpoint.id, companyId: delivery.company.id, circuit: transition, lastError: result.error }, `circuit breaker of endpoint ${endpoint.id} ${transition}`);
      }
      if (endpoint.status === 'active' || result.durationMs > 0) {
        metrics.attemptDuration.observe({ endpoint_host: endpointHost, outcome }, result.durationMs / 1000);
      }
      return settle(attempt, result.retryAfterMs);
    },

    /** The delivery used up its attempts: failed, with an alert unless it was a test send. */
    async recordDeliveryFailed({ deliveryId }: { deliveryId: string }): Promise<void> {
      const em = orm.em.fork();
      const delivery = await em.findOneOrFail(WebhookDelivery, { id: deliveryId });
      await markFailed(em, logger, deliveryId, !delivery.isTest);
    },

    /**
     * An operator cancelled the run: the delivery is recorded as cancelled (it can still be re-run). The run may not
     * have checked its input yet, so only a run whose input and workflow id name the delivery records it.
     */
    async recordDeliveryCancelled({ input, workflowId }: { input: WebhookDeliveryInput; workflowId: string }): Promise<void> {
      if (inputShapeProblem(input) || workflowId !== deliveryWorkflowId(input.deliveryId)) return;
      await orm.em
        .fork()
        .getConnection()
        .execute(
          `update webhook_deliveries set status = 'cancelled', next_attempt_at = null, held_reason = null, held_until = null, updated_at = now()
            where id = ? and company_id = ? and endpoint_id = ? and event_type = ? and status <> 'delivered'`,
          [input.deliveryId, input.companyId, input.endpointId, input.eventType],
        );
    },
  };
}

export type DeliveryRunActivities = ReturnType<typeof createDeliveryRunActivities>;
