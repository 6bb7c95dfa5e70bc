import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setDefaultSignalHandler,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { DeliveryRunActivities } from '../activities/webhook-delivery';
import { COMPANY_ID, DELIVERY_HELD, DELIVERY_STATUS, ENDPOINT_HOST, ENDPOINT_ID, EVENT_ID, EVENT_TYPE } from './search-attributes';
import {
  ATTEMPT_FAILED,
  ATTEMPT_REJECTED,
  type AttemptFailure,
  type AttemptTrigger,
  checkRerunRequest,
  DELIVERY_FAILED,
  type DeliveryRunPlan,
  type DeliveryStatus,
  describeFailure,
  type FirstAttempt,
  type HoldReason,
  RERUN_UPDATE_DESCRIPTION,
  type RerunResult,
  waitBeforeNextAttempt,
  type WebhookDeliveryInput,
  type WebhookDeliveryResult,
  type WebhookDeliveryStart,
  WEBHOOK_DELIVERY,
} from './webhook-delivery.contract';
import { temporalSignal, temporalUpdate } from './messages';

const deliveries = proxyActivities<DeliveryRunActivities>({
  // One attempt is one HTTP exchange (≤ WEBHOOK_TIMEOUT_MS) plus bookkeeping; heartbeats during the exchange
  // let a new worker take over within seconds when the one making it dies.
  startToCloseTimeout: '3 minutes',
  heartbeatTimeout: '10 seconds',
  // Bounded, but long enough (about an hour) to ride out a database or network outage. A failed attempt is not
  // retried here: it fails the activity for good and the schedule below decides.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 60 },
});

/**
 * The plan, and with it the first attempt, as a local activity: run in the run's first workflow task instead of an
 * activity task of its own, so a delivery whose endpoint answers at once is one workflow task. Its first retry is soon,
 * for a run started by hand before its delivery was written. Waits longer than the run's workflow task may last are
 * not its to make (FIRST_ATTEMPT_INLINE_MS in activities/webhook-delivery.ts).
 */
const planning = proxyLocalActivities<DeliveryRunActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '100 milliseconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 60 },
});

/**
 * Runs started before the first attempt moved into the first workflow task: those of LOCAL_PLAN_PATCH plan locally, with
 * the first attempt's admission, and set only the search attributes that differ from the start's; older ones replay the
 * plan as an activity and set every search attribute again. Runs started without WebhookDeliveryStart (by hand) record
 * FIRST_ATTEMPT_PATCH alone.
 */
const FIRST_ATTEMPT_PATCH = 'first-attempt-in-first-task';
const LOCAL_PLAN_PATCH = 'local-plan-with-admission';

type AttemptOutcome = { delivered: true; statusCode: number; durationMs: number } | { delivered: false; failure: AttemptFailure; permanent: boolean };

const duration = (ms: number) => (ms < 60_000 ? `${Math.round(ms / 100) / 10} s` : ms < 3_600_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 360_000) / 10} h`);
const UPDATE_HINT = 'Re-run now: More Actions → Send an Update → rerun.';
const HELD_BECAUSE: Record<HoldReason, string> = {
  circuit_open: "the endpoint's circuit breaker is open (it failed too often in a row); it waits for the breaker's probe",
  endpoint_busy: 'the endpoint has as many attempts in flight as it may (WEBHOOK_ENDPOINT_MAX_IN_FLIGHT); it waits its turn, oldest first',
  awaiting_predecessor:
    "the endpoint is ordered per record, and an earlier change of this delivery's record has not been delivered or failed for good yet; it goes once that one has",
};

/**
 * One event to one endpoint. Attempts at the scheduled times (durable timers) until a 2xx, a 4xx, or the last
 * attempt; each failed attempt is a failed activity carrying its status, error, duration and response excerpt.
 * A delivery that used up its attempts fails the run (red in the UI); Temporal's retry of the workflow then
 * starts a run that stays open waiting for a re-run (the "rerun" update). A run started for a delivery already
 * attempted (a re-run) makes one attempt, numbered after the recorded ones: attempt records are never rewritten.
 */
export async function webhookDelivery(input: WebhookDeliveryInput, start?: WebhookDeliveryStart): Promise<WebhookDeliveryResult> {
  const info = workflowInfo();
  // Re-run requests are tickets served in order by the next attempt; the update answers with that attempt.
  let requested = 0;
  let served = 0;
  let attemptInFlight = false;
  let lastManual: RerunResult | null = null;
  setHandler(
    temporalUpdate(WEBHOOK_DELIVERY.updates.rerun),
    async () => {
      const ticket = ++requested;
      await condition(() => served >= ticket);
      return lastManual!;
    },
    {
      description: RERUN_UPDATE_DESCRIPTION,
      validator: (request) => {
        checkRerunRequest(request);
        if (attemptInFlight) throw new Error('An attempt is being made right now; re-run once it has finished');
        if (requested > served) throw new Error('A re-run is already waiting to be made');
      },
    },
  );
  // Set when the endpoint was disabled or deleted: a retry wait ends at once.
  let endpointEnded = false;
  setHandler(temporalSignal(WEBHOOK_DELIVERY.signals.endpointEnded), () => {
    endpointEnded = true;
  });
  // Set by the endpoint's wake-up; a held attempt waits for it or its timer, whichever comes first.
  let endpointReady = false;
  setHandler(temporalSignal(WEBHOOK_DELIVERY.signals.endpointReady), () => {
    endpointReady = true;
  });
  let currentDetails = '';
  // A signal cannot be refused, but a mistyped one should not vanish: it is logged and shown in the details.
  setDefaultSignalHandler((name) => {
    log.warn('Ignored an unknown signal', { signal: name });
    setCurrentDetails(`${currentDetails}\n\nIgnored the signal "${name}": this workflow takes no signals. ${UPDATE_HINT}`);
  });

  // Runs started by the service say so; others (begun before it, or by hand) by their markers.
  const inline = start?.firstAttemptInFirstTask === true || patched(FIRST_ATTEMPT_PATCH);
  const lean = inline || patched(LOCAL_PLAN_PATCH);
  /** Sets the search attributes given, leaving out (in a lean run) those that already have their value. */
  const setSearchAttributes = (pairs: { key: typeof DELIVERY_STATUS; value: string | null }[]) => {
    const current = workflowInfo().typedSearchAttributes;
    const changed = lean ? pairs.filter((pair) => (current.get(pair.key) ?? null) !== pair.value) : pairs;
    if (changed.length) upsertSearchAttributes(changed);
  };
  const show = (status: DeliveryStatus, details: string) => {
    setSearchAttributes([{ key: DELIVERY_STATUS, value: status }]);
    currentDetails = `**${status}** · ${details}`;
    setCurrentDetails(currentDetails);
  };

  let attemptNumber = 0;
  let lastFailure: AttemptFailure | null = null;

  /**
   * Makes the next attempt, starting from what the run's first task left of it (`first`): made already, in flight (its
   * answer awaited by an activity), admitted (its slot taken: the first try does not ask again), held (it waits before
   * asking) or throttled; by default, nothing.
   */
  async function attempt(trigger: AttemptTrigger, nextAttemptInMs: number | null, first: FirstTry = { kind: 'none' }): Promise<AttemptOutcome> {
    const number = attemptNumber++;
    attemptInFlight = true;
    try {
      if (first.kind === 'made') return first.outcome;
      if (first.kind === 'held') await holdAttempt(number, first.reason, first.heldForMs);
      if (first.kind === 'throttled') await sleep(first.throttledForMs, { summary: 'Endpoint rate limit: waiting for a slot' });
      let admitted = first.kind === 'admitted';
      let inFlight = first.kind === 'in_flight';
      for (;;) {
        // Cleared before asking, not after a hold begins: a wake-up sent while the activity that held this attempt was
        // still answering must not be lost.
        endpointReady = false;
        try {
          const request = { deliveryId: input.deliveryId, attemptNumber: number, trigger, nextAttemptInMs };
          const sent = inFlight
            ? await deliveries.awaitDeliveryAttempt.executeWithOptions({ summary: `Attempt ${number + 1}: awaiting the endpoint's answer` }, [request])
            : await deliveries.sendDeliveryAttempt.executeWithOptions({ summary: `Attempt ${number + 1} (X-Webhook-Retry ${number}, ${trigger})` }, [
                { ...request, ...(admitted ? { admitted } : {}) },
              ]);
          // After a throttle or a hold the slot may have gone: the next try asks.
          admitted = false;
          inFlight = false;
          if ('throttledForMs' in sent) {
            // The endpoint's own rate limit: wait for its next slot; the attempt has not been made.
            await sleep(sent.throttledForMs, { summary: 'Endpoint rate limit: waiting for a slot' });
            continue;
          }
          if ('heldForMs' in sent) {
            // Held by the endpoint: not an attempt, so it does not count against the schedule. A re-run asked for
            // meanwhile is made once the endpoint lets attempts through.
            await holdAttempt(number, sent.reason, sent.heldForMs);
            continue;
          }
          showHeld(null);
          return { delivered: true, statusCode: sent.statusCode, durationMs: sent.durationMs };
        } catch (error) {
          const failure = attemptFailureOf(error);
          if (!failure) throw error;
          showHeld(null);
          return { delivered: false, failure: failure.details, permanent: failure.type === ATTEMPT_REJECTED };
        }
      }
    } finally {
      attemptInFlight = false;
    }
  }

  let heldBecause: HoldReason | null = null;
  /** Keeps DeliveryHeld as the run's hold is: why it waits, or absent once its attempt is made. */
  function showHeld(reason: HoldReason | null): void {
    if (reason === heldBecause) return;
    heldBecause = reason;
    setSearchAttributes([{ key: DELIVERY_HELD, value: reason }]);
  }

  /**
   * Waits, without a worker slot, until the endpoint wakes this run or `ms` pass; then the attempt asks again. No
   * attempt is in flight meanwhile, so a re-run may be asked for.
   */
  async function holdAttempt(number: number, reason: HoldReason, ms: number): Promise<void> {
    attemptInFlight = false;
    showHeld(reason);
    const shown = currentDetails;
    setCurrentDetails(`${shown}\n\n**Held** · Attempt ${number + 1} waits: ${HELD_BECAUSE[reason]}. It looks again by ${new Date(Date.now() + ms).toISOString()} at the latest.`);
    await condition(() => endpointReady, ms, { summary: `Held (${reason}): attempt ${number + 1} waits for the endpoint` });
    setCurrentDetails(shown);
    attemptInFlight = true;
  }

  /** Waits up to `ms` for a re-run request; true when one came, which the next attempt serves. */
  async function rerunRequested(ms: number, summary: string): Promise<boolean> {
    return condition(() => requested > served, ms, { summary });
  }

  /**
   * Waits up to `ms` for the next retry, or less: a re-run request (true: the next attempt serves it) or the endpoint
   * ended (the next attempt fails at once, without sending).
   */
  async function retryWait(ms: number, summary: string): Promise<boolean> {
    await condition(() => requested > served || endpointEnded, ms, { summary });
    return requested > served;
  }

  /** Answers the re-run requests made up to `upTo` with the attempt just made. */
  function answerReruns(outcome: AttemptOutcome, upTo = requested): void {
    lastManual = outcome.delivered
      ? { attemptNumber: attemptNumber - 1, delivered: true, statusCode: outcome.statusCode, error: null }
      : { attemptNumber: attemptNumber - 1, delivered: false, statusCode: outcome.failure.statusCode, error: describeFailure(outcome.failure) };
    served = upTo;
  }

  /** Makes the attempt a re-run asked for, and answers the requests it serves. */
  async function manualAttempt(nextAttemptInMs: number | null, first?: FirstTry): Promise<AttemptOutcome> {
    const serving = requested;
    const outcome = await attempt('manual', nextAttemptInMs, first);
    answerReruns(outcome, serving);
    return outcome;
  }

  async function delivered(outcome: Extract<AttemptOutcome, { delivered: true }>): Promise<WebhookDeliveryResult> {
    // A request made while the run began is answered by the attempt that delivered.
    if (requested > served) answerReruns(outcome);
    show('delivered', `Delivered on attempt ${attemptNumber} (HTTP ${outcome.statusCode} after ${outcome.durationMs} ms).`);
    await condition(allHandlersFinished);
    return { status: 'delivered', attempts: attemptNumber };
  }

  const failedSummary = () => `Failed after ${attemptNumber} attempt(s). Last: ${lastFailure ? describeFailure(lastFailure) : 'no attempt'}.`;
  // Short, for the timeline: what failed shows next to the event, without opening it.
  const afterAttempts = () => `after ${attemptNumber} attempt(s)${lastFailure ? ` (${lastFailure.error})` : ''}`;
  const recordFailed = () => deliveries.recordDeliveryFailed.executeWithOptions({ summary: `Delivery failed ${afterAttempts()}` }, [{ deliveryId: input.deliveryId }]);

  try {
    const begin = { input, workflowId: info.workflowId, runAttempt: info.attempt };
    const { plan, first } = inline ? await beginWithFirstAttempt(begin) : await beginAsBefore(begin, lean);
    // All of them, from the checked input: a run started by hand (the UI's "Start Workflow Like This One") is as findable.
    setSearchAttributes([
      { key: COMPANY_ID, value: input.companyId },
      { key: ENDPOINT_ID, value: input.endpointId },
      { key: EVENT_TYPE, value: input.eventType },
      { key: ENDPOINT_HOST, value: plan.endpointHost },
      ...(plan.eventId ? [{ key: EVENT_ID, value: plan.eventId }] : []),
    ]);
    attemptNumber = plan.nextAttemptNumber;
    lastFailure = plan.lastFailure;

    if (plan.mode === 'test') {
      const outcome = await attempt('test', null, first);
      if (outcome.delivered) return await delivered(outcome);
      lastFailure = outcome.failure;
      await recordFailed();
      show('failed', failedSummary());
      throw ApplicationFailure.create({ type: DELIVERY_FAILED, message: `Test delivery ${failedSummary()}`, details: [lastFailure], nonRetryable: true });
    }
    if (plan.mode !== 'await_rerun') {
      const waits = plan.mode === 'schedule' ? plan.retryDelaysMs : [];
      show(plan.mode === 'schedule' ? 'pending' : 'retrying', plan.mode === 'schedule' ? 'First attempt under way.' : 'Re-run under way.');
      let outcome = plan.mode === 'schedule' ? await attempt('automatic', waits[0] ?? null, first) : await manualAttempt(null, first);
      for (let i = 0; ; i++) {
        if (outcome.delivered) return await delivered(outcome);
        lastFailure = outcome.failure;
        // Ended while the attempt was made, after the endpoint's releaseWaiting looked for retry waits to end.
        if (lastFailure.endpointEnded) endpointEnded = true;
        const scheduled = waits[i];
        if (outcome.permanent || scheduled === undefined) break;
        const wait = waitBeforeNextAttempt(scheduled, lastFailure.retryAfterMs, plan.longestDelayMs);
        const next = new Date(Date.now() + wait).toISOString();
        show('retrying', `Attempt ${attemptNumber} failed: ${describeFailure(lastFailure)}. Next attempt at ${next}. ${UPDATE_HINT}`);
        const nextAttemptInMs = waits[i + 1] ?? null;
        outcome = (await retryWait(wait, `Attempt ${attemptNumber + 1} in ${duration(wait)}, or on a re-run`))
          ? await manualAttempt(nextAttemptInMs)
          : await attempt('automatic', nextAttemptInMs);
      }
      await recordFailed();
      show('failed', `${failedSummary()} An alert was raised.`);
      // Retryable on purpose: the run shows as Failed, and Temporal's retry of the workflow starts the run that
      // waits for a re-run (mode await_rerun), so the open failed deliveries are exactly the current ones.
      throw ApplicationFailure.create({ type: DELIVERY_FAILED, message: `Delivery ${failedSummary()}`, details: [lastFailure] });
    }

    await recordFailed();
    for (;;) {
      show('failed', `${failedSummary()} Waiting for a re-run. ${UPDATE_HINT}`);
      if (!(await rerunRequested(plan.rerunWaitMs, `Failed ${afterAttempts()}. Waiting ${duration(plan.rerunWaitMs)} for the update "rerun"`))) {
        throw ApplicationFailure.create({
          type: DELIVERY_FAILED,
          message: `Delivery ${failedSummary()} Not re-run within ${duration(plan.rerunWaitMs)}; POST /api/v1/webhook-deliveries/${input.deliveryId}/retry still re-runs it.`,
          details: [lastFailure],
          nonRetryable: true,
        });
      }
      const outcome = await manualAttempt(null);
      if (outcome.delivered) return await delivered(outcome);
      lastFailure = outcome.failure;
      await recordFailed();
    }
  } catch (error) {
    // Cancelled at any point, even before the plan: the activity checks the input before recording it.
    if (isCancellation(error)) {
      await CancellationScope.nonCancellable(() => deliveries.recordDeliveryCancelled({ input, workflowId: info.workflowId }));
      show('cancelled', `Cancelled after ${attemptNumber} attempt(s). It can still be re-run: POST /api/v1/webhook-deliveries/${input.deliveryId}/retry.`);
    }
    throw error;
  }
}

/** What the run's first task left of its first attempt, with a made one's outcome. */
type FirstTry = Exclude<FirstAttempt, { kind: 'delivered' }> | { kind: 'made'; outcome: AttemptOutcome };

type RunBegin = { input: WebhookDeliveryInput; workflowId: string; runAttempt: number };

/**
 * The plan and the first attempt, in the run's first workflow task (makeFirstAttempt). A first attempt that failed
 * fails the local activity with the attempt's details, then the plan.
 */
async function beginWithFirstAttempt(begin: RunBegin): Promise<{ plan: DeliveryRunPlan; first: FirstTry }> {
  try {
    const { plan, first } = await planning.makeFirstAttempt.executeWithOptions({ summary: 'Plan the run, and make the first attempt if the endpoint answers at once' }, [begin]);
    if (first.kind === 'delivered') return { plan, first: { kind: 'made', outcome: { delivered: true, statusCode: first.statusCode, durationMs: first.durationMs } } };
    return { plan, first };
  } catch (error) {
    const failure = attemptFailureOf(error);
    if (!failure?.plan) throw error;
    return { plan: failure.plan, first: { kind: 'made', outcome: { delivered: false, failure: failure.details, permanent: failure.type === ATTEMPT_REJECTED } } };
  }
}

/** The plan of runs started before FIRST_ATTEMPT_PATCH: a local activity with the first attempt's admission, or an activity. */
async function beginAsBefore(begin: RunBegin, lean: boolean): Promise<{ plan: DeliveryRunPlan; first: FirstTry }> {
  const plan = lean ? await planning.beginDeliveryRun({ ...begin, admit: true }) : { ...(await deliveries.beginDeliveryRun(begin)), hold: null };
  const first: FirstTry = plan.hold ? { kind: 'held', ...plan.hold } : plan.admitted === true ? { kind: 'admitted' } : { kind: 'none' };
  return { plan, first };
}

/**
 * The failure of an attempt that was made and failed (not an outage of ours), with what it carries: an activity's
 * failure has it as its cause; a local activity's is it.
 */
function attemptFailureOf(error: unknown): { type: string; details: AttemptFailure; plan: DeliveryRunPlan | null } | null {
  const failure = error instanceof ActivityFailure ? error.cause : error;
  if (!(failure instanceof ApplicationFailure)) return null;
  const { type, details } = failure;
  if ((type !== ATTEMPT_FAILED && type !== ATTEMPT_REJECTED) || !details?.[0]) return null;
  return { type, details: details[0] as AttemptFailure, plan: (details[1] as DeliveryRunPlan | undefined) ?? null };
}
