import { ApplicationFailure, Context } from '@temporalio/activity';
import { markFailed } from '../src/delivery/alerts';
import type { AttemptAnswer, AttemptRequest, DeliveryAttempts } from '../src/delivery/attempts/attempt';
import { type MadeAttempt, madeFromRecord } from '../src/delivery/attempts/attempt-result';
import type { BegunAttempt } from '../src/delivery/attempts/attempt-statements';
import { WebhookDelivery } from '../src/delivery/webhook-delivery.entity';
import { isUuid } from '../src/schemas/formats';
import {
  ATTEMPT_FAILED,
  ATTEMPT_REJECTED,
  type AttemptFailure,
  DELIVERY_RUN_REFUSED,
  type DeliveryRunPlan,
  type DeliveryRunStart,
  deliveryWorkflowId,
  describeFailure,
  type WebhookDeliveryInput,
} from '../workflows/webhook-delivery.contract';
import type { ActivityDeps } from './deps';
import type { AttemptTrigger, HoldReason } from '../workflows/webhook-delivery.contract';

/** About 25 minutes of activity retries (1 s doubling to 1 min) before a missing delivery is given up. */
const MISSING_DELIVERY_ATTEMPTS = 30;
/**
 * How long the first attempt's answer is awaited in the run's first workflow task, which it holds meanwhile: a slower
 * answer is awaited by the activity awaitDeliveryAttempt instead, as every attempt to an endpoint that has been failing is.
 */
export const FIRST_ATTEMPT_INLINE_MS = 1_000;
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
 * endpoint holds it (src/delivery/endpoints/endpoint-admission.ts): the run waits up to `heldForMs` or until it is woken.
 */
export type SendAttemptResult = { statusCode: number; durationMs: number } | { throttledForMs: number } | { heldForMs: number; reason: HoldReason };

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

/** The input's fields that differ from the delivery's row, as "field: given ≠ stored". */
function inputMismatches(input: WebhookDeliveryInput, begun: BegunAttempt): string[] {
  const stored: WebhookDeliveryInput = { deliveryId: begun.deliveryId, companyId: begun.companyId, endpointId: begun.endpointId, eventType: begun.eventType };
  return INPUT_FIELDS.filter((field) => input[field] !== stored[field]).map((field) => `${field}: ${JSON.stringify(input[field])} ≠ ${JSON.stringify(stored[field])}`);
}

/** A failed attempt as its run is told it, in the failure of its activity (and so in the run's history). */
function failureOf(attempt: MadeAttempt): AttemptFailure {
  return {
    attemptNumber: attempt.attemptNumber,
    statusCode: attempt.statusCode,
    error: attempt.error ?? 'unknown error',
    durationMs: attempt.durationMs,
    responseExcerpt: attempt.responseExcerpt,
    retryAfterMs: attempt.retryAfterMs,
    ...(attempt.endpointEnded ? { endpointEnded: attempt.endpointEnded } : {}),
  };
}

/**
 * A made attempt as the workflow takes it: a result when delivered; otherwise a failed activity carrying the attempt's
 * status code, error, duration and response excerpt (and `more` details after it), which is what the UI shows.
 */
function settle(attempt: MadeAttempt, ...more: unknown[]): { statusCode: number; durationMs: number } {
  if (attempt.outcome === 'succeeded') return { statusCode: attempt.statusCode!, durationMs: attempt.durationMs };
  const failure = failureOf(attempt);
  throw ApplicationFailure.create({
    type: attempt.outcome === 'permanent_failure' ? ATTEMPT_REJECTED : ATTEMPT_FAILED,
    message: describeFailure(failure),
    details: [failure, ...more],
    nonRetryable: true,
    // Expected outcomes of talking to someone else's server: not logged by the worker as its own errors.
    category: 'BENIGN',
  });
}

/** An attempt's result as sendDeliveryAttempt answers it. */
function answerOf(result: Exclude<AttemptAnswer, { kind: 'in_flight' }>): SendAttemptResult {
  if (result.kind === 'throttled') return { throttledForMs: result.throttledForMs };
  if (result.kind === 'held') return { heldForMs: result.heldForMs, reason: result.reason };
  return settle(result.attempt);
}

/** Whether the attempt a run would make now is recorded in progress: handed off or being sent, and not finished yet. */
const inFlight = (begun: BegunAttempt) => begun.last?.outcome === 'in_progress' && begun.last.attemptNumber === begun.attemptNumber;

/** Checks the run's input and workflow id before anything is read. */
function checkRun(input: WebhookDeliveryInput, workflowId: string): void {
  const shapeProblem = inputShapeProblem(input);
  if (shapeProblem) throw refuse(shapeProblem);
  if (workflowId !== deliveryWorkflowId(input.deliveryId)) {
    throw refuse(`The workflow id ${workflowId} does not name delivery ${input.deliveryId} (expected ${deliveryWorkflowId(input.deliveryId)})`);
  }
}

/**
 * The delivery as begun for the run: a missing one is waited for a while (a run started by hand before its delivery
 * was written), one that differs from the input is refused, and (but where `delivered` is allowed) one delivered already.
 */
function checkBegun(input: WebhookDeliveryInput, begun: BegunAttempt | null, delivered: 'refused' | 'allowed' = 'refused'): BegunAttempt {
  if (!begun) {
    const message = `Delivery ${input.deliveryId} does not exist`;
    if (Context.current().info.attempt >= MISSING_DELIVERY_ATTEMPTS) throw refuse(message);
    throw new Error(`${message} (yet)`);
  }
  const mismatches = inputMismatches(input, begun);
  if (mismatches.length) throw refuse(`The input does not match delivery ${begun.deliveryId} in the database: ${mismatches.join('; ')}`);
  if (begun.status === 'delivered' && delivered === 'refused') throw refuse(`Delivery ${begun.deliveryId} was delivered at ${begun.deliveredAt?.toISOString()}; there is nothing to re-run`);
  return begun;
}

/**
 * The run's plan from what is recorded: the whole schedule, one attempt of a re-run, waiting for a re-run, or a test send.
 * A first attempt still in flight is the schedule's, not a re-run's.
 */
function planOf(webhooks: ActivityDeps['webhooks'], begun: BegunAttempt, runAttempt: number): DeliveryRunPlan {
  const { last } = begun;
  const rerun = last !== null && !(inFlight(begun) && last.attemptNumber === 0);
  return {
    mode: begun.isTest ? 'test' : runAttempt > 1 ? 'await_rerun' : rerun ? 'rerun' : 'schedule',
    nextAttemptNumber: begun.attemptNumber,
    retryDelaysMs: webhooks.retryDelaysMs,
    longestDelayMs: Math.max(0, ...webhooks.retryDelaysMs),
    rerunWaitMs: webhooks.rerunWaitMs,
    endpointHost: new URL(begun.endpoint.url).hostname,
    eventId: begun.eventId,
    lastFailure: last && last.outcome !== 'succeeded' && last.outcome !== 'in_progress' ? failureOf(madeFromRecord({ ...last, outcome: last.outcome })) : null,
    hold: null,
  };
}

/**
 * The first task of a run whose delivery was delivered already: this run's own first task done again (its completion
 * was refused, say because a signal came while it ran, and its local activity's result went with it), or a run started
 * by hand for a delivered delivery. Nothing is sent: the run ends delivered, with the attempt that delivered it.
 */
function alreadyDelivered(plan: DeliveryRunPlan, begun: BegunAttempt): DeliveryRunStart {
  const last = begun.last!;
  return {
    // Numbered as the attempt that delivered it, which the run then counts as made.
    plan: { ...plan, mode: plan.mode === 'await_rerun' ? 'rerun' : plan.mode, nextAttemptNumber: last.attemptNumber, lastFailure: null },
    first: { kind: 'delivered', statusCode: last.statusCode ?? 200, durationMs: last.durationMs ?? 0 },
  };
}

interface RunStartInput {
  input: WebhookDeliveryInput;
  workflowId: string;
  runAttempt: number;
}

/**
 * The run's first workflow task, as a local activity: checks the input against the database (a run started by hand
 * with another delivery's fields is refused), plans the run from what is recorded, and makes its first attempt there
 * and then when its endpoint lets it through and has not been failing (src/delivery/attempts/attempt.ts: two
 * statements and the request). A delivered attempt closes the run in that task; a failed one fails this local activity
 * as sendDeliveryAttempt would, with the plan after the attempt's details. An answer slower than FIRST_ATTEMPT_INLINE_MS
 * is handed off to awaitDeliveryAttempt, so a hanging endpoint holds the task that long at most.
 */
async function makeFirstAttempt({ webhooks, deliveryAttempts: attempts }: ActivityDeps, { input, workflowId, runAttempt }: RunStartInput): Promise<DeliveryRunStart> {
  checkRun(input, workflowId);
  // A run after a failed one only waits for a re-run: nothing is asked of the endpoint.
  const attempting = runAttempt === 1;
  const asked = { attemptNumber: null, trigger: 'automatic', takeRateSlot: attempting, admit: attempting, markInProgress: attempting, expected: input } as const;
  const begun = checkBegun(input, await attempts.begin(input.deliveryId, asked), 'allowed');
  const plan = planOf(webhooks, begun, runAttempt);
  if (begun.status === 'delivered') return alreadyDelivered(plan, begun);
  if (plan.mode === 'await_rerun') return { plan, first: { kind: 'none' } };
  // This run's first task done again while its attempt is recorded in progress (the task's completion was refused,
  // or it timed out on an overloaded or paused worker, after the attempt was handed off or while it was still being
  // made inline): the attempt is in flight, here or in another worker, and the run awaits its answer
  // (awaitDeliveryAttempt) instead of sending it again; only an attempt whose worker is gone is made again.
  if (inFlight(begun)) return { plan, first: { kind: 'in_flight' } };
  const { admission } = begun;
  if (admission?.kind === 'throttled' || admission?.kind === 'held') return { plan, first: admission };
  // A test send goes out whatever the endpoint's state: it is how a subscriber checks a fixed endpoint.
  if (begun.endpoint.status === 'active' && !begun.isTest && (begun.endpoint.failing || begun.endpoint.circuitState !== 'closed')) {
    return { plan, first: { kind: 'admitted' } };
  }
  const request: AttemptRequest = {
    deliveryId: input.deliveryId,
    attemptNumber: begun.attemptNumber,
    trigger: plan.mode === 'test' ? 'test' : plan.mode === 'rerun' ? 'manual' : 'automatic',
    nextAttemptInMs: plan.mode === 'schedule' ? (plan.retryDelaysMs[0] ?? null) : null,
  };
  const result = await attempts.make(begun, request, { handOffAfterMs: FIRST_ATTEMPT_INLINE_MS });
  if (result.kind !== 'made') return { plan, first: result };
  return { plan, first: { kind: 'delivered', ...settle(result.attempt, plan) } };
}

/**
 * Checks the run's input against the database and plans the run from what is recorded; with `admit`, also asks the
 * endpoint to admit the first attempt. The first task of runs started before makeFirstAttempt.
 */
async function beginDeliveryRun({ webhooks, deliveryAttempts: attempts }: ActivityDeps, { input, workflowId, runAttempt, admit = false }: RunStartInput & { admit?: boolean }): Promise<DeliveryRunPlan> {
  checkRun(input, workflowId);
  const asking = admit && runAttempt === 1;
  const begun = checkBegun(input, await attempts.begin(input.deliveryId, { attemptNumber: null, trigger: 'automatic', takeRateSlot: false, admit: asking, markInProgress: false, expected: input }));
  const plan = planOf(webhooks, begun, runAttempt);
  const held = begun.admission?.kind === 'held' ? begun.admission : null;
  return { ...plan, hold: held && { heldForMs: held.heldForMs, reason: held.reason }, admitted: begun.admission?.kind === 'admitted' };
}

/**
 * One signed POST of the delivery's stored body, recorded as attempt `attemptNumber` (src/delivery/attempts/attempt.ts). A
 * 2xx returns; anything else fails the activity for good with the attempt's status code, error, duration and response
 * excerpt. The record of a finished attempt is never rewritten: a retry of this activity after the attempt finished
 * answers from it. A retry while it is still recorded in progress awaits its answer: the execution before it may still
 * be sending (its worker paused or too loaded to heartbeat in time). Only once no process can be making it any more (a
 * crash mid-attempt) is it sent again and finished here.
 */
async function sendDeliveryAttempt(attempts: DeliveryAttempts, input: SendAttemptInput): Promise<SendAttemptResult> {
  const retry = Context.current().info.attempt > 1;
  const heartbeat = () => Context.current().heartbeat();
  // A retry of this activity asks again, which renews the slot's lease; asking with the slot held admits.
  const admit = !(input.admitted && !retry);
  const begun = await attempts.begin(input.deliveryId, { attemptNumber: input.attemptNumber, trigger: input.trigger, takeRateSlot: true, admit, markInProgress: true });
  if (!begun) throw new Error(`Delivery ${input.deliveryId} does not exist`);
  if (retry && inFlight(begun)) {
    const made = await attempts.awaitOutcome(input.deliveryId, input.attemptNumber, heartbeat);
    if (made) return settle(made);
  }
  const result = await attempts.make(begun, input, { onProgress: heartbeat });
  if (result.kind === 'in_flight') throw new Error('an attempt made without a hand-off was handed off');
  return answerOf(result);
}

/**
 * The answer of the first attempt, handed off by makeFirstAttempt: awaited in the worker making it, or read from its
 * record. When no worker is making it any more (it stopped mid-attempt), the attempt is made again here.
 */
async function awaitDeliveryAttempt(attempts: DeliveryAttempts, input: AttemptRequest): Promise<SendAttemptResult> {
  const heartbeat = () => Context.current().heartbeat();
  const made = await attempts.awaitOutcome(input.deliveryId, input.attemptNumber, heartbeat);
  if (made) return settle(made);
  const begun = await attempts.begin(input.deliveryId, { attemptNumber: input.attemptNumber, trigger: input.trigger, takeRateSlot: false, admit: true, markInProgress: true });
  if (!begun) throw new Error(`Delivery ${input.deliveryId} does not exist`);
  const result = await attempts.make(begun, input, { onProgress: heartbeat });
  if (result.kind === 'in_flight') throw new Error('an attempt made without a hand-off was handed off');
  return answerOf(result);
}

/** The delivery used up its attempts: failed, with an alert unless it was a test send. */
async function recordDeliveryFailed({ orm, logger, deliveryAttempts: attempts }: ActivityDeps, { deliveryId }: { deliveryId: string }): Promise<void> {
  const em = orm.em.fork();
  const delivery = await em.findOneOrFail(WebhookDelivery, { id: deliveryId });
  await markFailed(em, logger, deliveryId, !delivery.isTest);
  await attempts.ended(deliveryId, delivery.endpoint.id);
}

/**
 * An operator cancelled the run: the delivery is recorded as cancelled (it can still be re-run). The run may not have
 * checked its input yet, so only a run whose input and workflow id name the delivery records it.
 */
async function recordDeliveryCancelled({ orm, deliveryAttempts: attempts }: ActivityDeps, { input, workflowId }: { input: WebhookDeliveryInput; workflowId: string }): Promise<void> {
  if (inputShapeProblem(input) || workflowId !== deliveryWorkflowId(input.deliveryId)) return;
  await orm.em
    .fork()
    .getConnection()
    .execute(
      `update webhook_deliveries set status = 'cancelled', next_attempt_at = null, held_reason = null, held_until = null, updated_at = now()
        where id = ? and company_id = ? and endpoint_id = ? and event_type = ? and status <> 'delivered'`,
      [input.deliveryId, input.companyId, input.endpointId, input.eventType],
    );
  await attempts.ended(input.deliveryId, input.endpointId);
}

/** A delivery run's activities, each above with what it does (workflows/webhook-delivery.ts runs them). */
export function createDeliveryRunActivities(deps: ActivityDeps) {
  return {
    makeFirstAttempt: (start: RunStartInput) => makeFirstAttempt(deps, start),
    beginDeliveryRun: (start: RunStartInput & { admit?: boolean }) => beginDeliveryRun(deps, start),
    sendDeliveryAttempt: (input: SendAttemptInput) => sendDeliveryAttempt(deps.deliveryAttempts, input),
    awaitDeliveryAttempt: (input: AttemptRequest) => awaitDeliveryAttempt(deps.deliveryAttempts, input),
    recordDeliveryFailed: (input: { deliveryId: string }) => recordDeliveryFailed(deps, input),
    recordDeliveryCancelled: (input: { input: WebhookDeliveryInput; workflowId: string }) => recordDeliveryCancelled(deps, input),
  };
}

export type DeliveryRunActivities = ReturnType<typeof createDeliveryRunActivities>;
