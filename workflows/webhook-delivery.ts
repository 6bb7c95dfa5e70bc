import {
  ActivityFailure, allHandlersFinished, ApplicationFailure, CancellationScope, condition, isCancellation, log, patched, proxyActivities,
  proxyLocalActivities, setCurrentDetails, setDefaultSignalHandler, setHandler, sleep, upsertSearchAttributes, workflowInfo,
} from '@temporalio/workflow';
import type { DeliveryRunActivities } from '../activities/webhook-delivery';
import { COMPANY_ID, DELIVERY_HELD, DELIVERY_STATUS, ENDPOINT_HOST, ENDPOINT_ID, EVENT_ID, EVENT_TYPE } from './search-attributes';
import {
  ATTEMPT_FAILED, ATTEMPT_REJECTED, type AttemptFailure, type AttemptTrigger, checkRerunRequest, DELIVERY_FAILED, type DeliveryRunPlan, type DeliveryStatus,
  describeFailure, type FirstAttempt, type HoldReason, RERUN_UPDATE_DESCRIPTION, type RerunResult, waitBeforeNextAttempt, type WebhookDeliveryInput,
  type WebhookDeliveryResult, type WebhookDeliveryStart, WEBHOOK_DELIVERY,
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

/** An attempt made, as the run goes on from it: delivered, or failed (for good, or to be retried on the schedule). */
type AttemptOutcome = { delivered: true; statusCode: number; durationMs: number } | FailedAttempt;
type FailedAttempt = { delivered: false; failure: AttemptFailure; permanent: boolean };

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
 *
 * Top-down: the run takes its messages, plans (its first task makes its first attempt), then goes the way its plan
 * says: a test send, the schedule (a re-run: one attempt), or waiting for a re-run; a cancellation is recorded.
 */
export async function webhookDelivery(input: WebhookDeliveryInput, start?: WebhookDeliveryStart): Promise<WebhookDeliveryResult> {
  const run = new DeliveryRun(input);
  run.takeMessages();
  // Runs started by the service say so; others (begun before it, or by hand) by their markers.
  const inline = start?.firstAttemptInFirstTask === true || patched(FIRST_ATTEMPT_PATCH);
  run.lean = inline || patched(LOCAL_PLAN_PATCH);
  try {
    const { plan, first } = await run.begin(inline);
    if (plan.mode === 'test') return await run.testSend(first);
    if (plan.mode === 'await_rerun') return await run.awaitRerun(plan);
    return await run.followSchedule(plan, first);
  } catch (error) {
    // Cancelled at any point, even before the plan: the activity checks the input before recording it.
    if (isCancellation(error)) await run.cancelled();
    throw error;
  }
}

/** A run's state and its phases: its messages, the plan, the attempts and their holds, and the end. */
class DeliveryRun {
  private readonly info = workflowInfo();
  /** In a lean run, search attributes that already have their value are not set again. */
  lean = false;
  // Re-run requests are tickets served in order by the next attempt; the update answers with that attempt.
  private requested = 0;
  private served = 0;
  private attemptInFlight = false;
  private lastManual: RerunResult | null = null;
  /** Set when the endpoint was disabled or deleted: a retry wait ends at once. */
  private endpointEnded = false;
  /** Set by the endpoint's wake-up; a held attempt waits for it or its timer, whichever comes first. */
  private endpointReady = false;
  private currentDetails = '';
  private heldBecause: HoldReason | null = null;
  private attemptNumber = 0;
  private lastFailure: AttemptFailure | null = null;

  constructor(private readonly input: WebhookDeliveryInput) {}

  /** The update "rerun", the endpoint's two signals, and any other signal (logged and shown, not lost). */
  takeMessages(): void {
    setHandler(
      temporalUpdate(WEBHOOK_DELIVERY.updates.rerun),
      async () => {
        const ticket = ++this.requested;
        await condition(() => this.served >= ticket);
        return this.lastManual!;
      },
      {
        description: RERUN_UPDATE_DESCRIPTION,
        validator: (request) => {
          checkRerunRequest(request);
          if (this.attemptInFlight) throw new Error('An attempt is being made right now; re-run once it has finished');
          if (this.requested > this.served) throw new Error('A re-run is already waiting to be made');
        },
      },
    );
    setHandler(temporalSignal(WEBHOOK_DELIVERY.signals.endpointEnded), () => {
      this.endpointEnded = true;
    });
    setHandler(temporalSignal(WEBHOOK_DELIVERY.signals.endpointReady), () => {
      this.endpointReady = true;
    });
    // A signal cannot be refused, but a mistyped one should not vanish: it is logged and shown in the details.
    setDefaultSignalHandler((name) => {
      log.warn('Ignored an unknown signal', { signal: name });
      setCurrentDetails(`${this.currentDetails}\n\nIgnored the signal "${name}": this workflow takes no signals. ${UPDATE_HINT}`);
    });
  }

  /** The plan, with what the run's first task left of its first attempt; the run's search attributes from it. */
  async begin(inline: boolean): Promise<{ plan: DeliveryRunPlan; first: FirstTry }> {
    const { input, info } = this;
    const begin = { input, workflowId: info.workflowId, runAttempt: info.attempt };
    const { plan, first } = inline ? await beginWithFirstAttempt(begin) : await beginAsBefore(begin, this.lean);
    // All of them, from the checked input: a run started by hand (the UI's "Start Workflow Like This One") is as findable.
    this.setSearchAttributes([
      { key: COMPANY_ID, value: input.companyId },
      { key: ENDPOINT_ID, value: input.endpointId },
      { key: EVENT_TYPE, value: input.eventType },
      { key: ENDPOINT_HOST, value: plan.endpointHost },
      ...(plan.eventId ? [{ key: EVENT_ID, value: plan.eventId }] : []),
    ]);
    this.attemptNumber = plan.nextAttemptNumber;
    this.lastFailure = plan.lastFailure;
    return { plan, first };
  }

  /** A test send: one attempt, no alert; a failure fails the run for good. */
  async testSend(first: FirstTry): Promise<WebhookDeliveryResult> {
    const outcome = await this.attempt('test', null, first);
    if (outcome.delivered) return await this.delivered(outcome);
    this.lastFailure = outcome.failure;
    await this.recordFailed();
    this.show('failed', this.failedSummary());
    throw ApplicationFailure.create({ type: DELIVERY_FAILED, message: `Test delivery ${this.failedSummary()}`, details: [this.lastFailure], nonRetryable: true });
  }

  /** The schedule's attempts (a re-run's plan: its one attempt) until one delivers, one fails for good, or none is left. */
  async followSchedule(plan: DeliveryRunPlan, first: FirstTry): Promise<WebhookDeliveryResult> {
    const waits = plan.mode === 'schedule' ? plan.retryDelaysMs : [];
    this.show(plan.mode === 'schedule' ? 'pending' : 'retrying', plan.mode === 'schedule' ? 'First attempt under way.' : 'Re-run under way.');
    let outcome = plan.mode === 'schedule' ? await this.attempt('automatic', waits[0] ?? null, first) : await this.manualAttempt(null, first);
    for (let i = 0; ; i++) {
      if (outcome.delivered) return await this.delivered(outcome);
      this.lastFailure = outcome.failure;
      // Ended while the attempt was made, after the endpoint's releaseWaiting looked for retry waits to end.
      if (this.lastFailure.endpointEnded) this.endpointEnded = true;
      const scheduled = waits[i];
      if (outcome.permanent || scheduled === undefined) break;
      const wait = waitBeforeNextAttempt(scheduled, this.lastFailure.retryAfterMs, plan.longestDelayMs);
      const next = new Date(Date.now() + wait).toISOString();
      this.show('retrying', `Attempt ${this.attemptNumber} failed: ${describeFailure(this.lastFailure)}. Next attempt at ${next}. ${UPDATE_HINT}`);
      const nextAttemptInMs = waits[i + 1] ?? null;
      outcome = (await this.retryWait(wait, `Attempt ${this.attemptNumber + 1} in ${duration(wait)}, or on a re-run`))
        ? await this.manualAttempt(nextAttemptInMs)
        : await this.attempt('automatic', nextAttemptInMs);
    }
    await this.recordFailed();
    this.show('failed', `${this.failedSummary()} An alert was raised.`);
    // Retryable on purpose: the run shows as Failed, and Temporal's retry of the workflow starts the run that
    // waits for a re-run (mode await_rerun), so the open failed deliveries are exactly the current ones.
    throw ApplicationFailure.create({ type: DELIVERY_FAILED, message: `Delivery ${this.failedSummary()}`, details: [this.lastFailure] });
  }

  /** The failed delivery's run: one attempt per re-run asked for, until one delivers or none comes in time. */
  async awaitRerun(plan: DeliveryRunPlan): Promise<WebhookDeliveryResult> {
    await this.recordFailed();
    for (;;) {
      this.show('failed', `${this.failedSummary()} Waiting for a re-run. ${UPDATE_HINT}`);
      const summary = `Failed ${this.afterAttempts()}. Waiting ${duration(plan.rerunWaitMs)} for the update "rerun"`;
      if (!(await condition(() => this.requested > this.served, plan.rerunWaitMs, { summary }))) {
        throw ApplicationFailure.create({
          type: DELIVERY_FAILED,
          message: `Delivery ${this.failedSummary()} Not re-run within ${duration(plan.rerunWaitMs)}; POST /api/v1/webhook-deliveries/${this.input.deliveryId}/retry still re-runs it.`,
          details: [this.lastFailure],
          nonRetryable: true,
        });
      }
      const outcome = await this.manualAttempt(null);
      if (outcome.delivered) return await this.delivered(outcome);
      this.lastFailure = outcome.failure;
      await this.recordFailed();
    }
  }

  /**
   * Makes the next attempt, starting from what the run's first task left of it (`first`): made already, in flight (its
   * answer awaited by an activity), admitted (its slot taken: the first try does not ask again), held (it waits before
   * asking) or throttled; by default, nothing.
   */
  private async attempt(trigger: AttemptTrigger, nextAttemptInMs: number | null, first: FirstTry = { kind: 'none' }): Promise<AttemptOutcome> {
    const number = this.attemptNumber++;
    this.attemptInFlight = true;
    try {
      if (first.kind === 'made') return first.outcome;
      if (first.kind === 'held') await this.holdAttempt(number, first.reason, first.heldForMs);
      if (first.kind === 'throttled') await sleep(first.throttledForMs, { summary: 'Endpoint rate limit: waiting for a slot' });
      let admitted = first.kind === 'admitted';
      let inFlight = first.kind === 'in_flight';
      for (;;) {
        // Cleared before asking, not after a hold begins: a wake-up sent while the activity that held this attempt was
        // still answering must not be lost.
        this.endpointReady = false;
        try {
          const request = { deliveryId: this.input.deliveryId, attemptNumber: number, trigger, nextAttemptInMs };
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
            await this.holdAttempt(number, sent.reason, sent.heldForMs);
            continue;
          }
          this.showHeld(null);
          return { delivered: true, statusCode: sent.statusCode, durationMs: sent.durationMs };
        } catch (error) {
          const failed = failedAttemptOf(error);
          if (!failed) throw error;
          this.showHeld(null);
          return failed.outcome;
        }
      }
    } finally {
      this.attemptInFlight = false;
    }
  }

  /** Makes the attempt a re-run asked for, and answers the requests it serves. */
  private async manualAttempt(nextAttemptInMs: number | null, first?: FirstTry): Promise<AttemptOutcome> {
    const serving = this.requested;
    const outcome = await this.attempt('manual', nextAttemptInMs, first);
    this.answerReruns(outcome, serving);
    return outcome;
  }

  /**
   * Waits, without a worker slot, until the endpoint wakes this run or `ms` pass; then the attempt asks again. No
   * attempt is in flight meanwhile, so a re-run may be asked for.
   */
  private async holdAttempt(number: number, reason: HoldReason, ms: number): Promise<void> {
    this.attemptInFlight = false;
    this.showHeld(reason);
    const shown = this.currentDetails;
    setCurrentDetails(`${shown}\n\n**Held** · Attempt ${number + 1} waits: ${HELD_BECAUSE[reason]}. It looks again by ${new Date(Date.now() + ms).toISOString()} at the latest.`);
    await condition(() => this.endpointReady, ms, { summary: `Held (${reason}): attempt ${number + 1} waits for the endpoint` });
    setCurrentDetails(shown);
    this.attemptInFlight = true;
  }

  /** Keeps DeliveryHeld as the run's hold is: why it waits, or absent once its attempt is made. */
  private showHeld(reason: HoldReason | null): void {
    if (reason === this.heldBecause) return;
    this.heldBecause = reason;
    this.setSearchAttributes([{ key: DELIVERY_HELD, value: reason }]);
  }

  /**
   * Waits up to `ms` for the next retry, or less: a re-run request (true: the next attempt serves it) or the endpoint
   * ended (the next attempt fails at once, without sending).
   */
  private async retryWait(ms: number, summary: string): Promise<boolean> {
    await condition(() => this.requested > this.served || this.endpointEnded, ms, { summary });
    return this.requested > this.served;
  }

  /** Answers the re-run requests made up to `upTo` with the attempt just made. */
  private answerReruns(outcome: AttemptOutcome, upTo = this.requested): void {
    const attemptNumber = this.attemptNumber - 1;
    this.lastManual = outcome.delivered
      ? { attemptNumber, delivered: true, statusCode: outcome.statusCode, error: null }
      : { attemptNumber, delivered: false, statusCode: outcome.failure.statusCode, error: describeFailure(outcome.failure) };
    this.served = upTo;
  }

  /** The end of a delivered run: the re-runs waiting answered, the status shown, the handlers let finish. */
  private async delivered(outcome: Extract<AttemptOutcome, { delivered: true }>): Promise<WebhookDeliveryResult> {
    // A request made while the run began is answered by the attempt that delivered.
    if (this.requested > this.served) this.answerReruns(outcome);
    this.show('delivered', `Delivered on attempt ${this.attemptNumber} (HTTP ${outcome.statusCode} after ${outcome.durationMs} ms).`);
    await condition(allHandlersFinished);
    return { status: 'delivered', attempts: this.attemptNumber };
  }

  /** The delivery failed (used up its attempts, or its re-run failed): recorded, with an alert unless a test send. */
  private readonly recordFailed = () =>
    deliveries.recordDeliveryFailed.executeWithOptions({ summary: `Delivery failed ${this.afterAttempts()}` }, [{ deliveryId: this.input.deliveryId }]);

  /** The end of a cancelled run: the delivery recorded as cancelled, even while the run is being cancelled. */
  async cancelled(): Promise<void> {
    const { input, info } = this;
    await CancellationScope.nonCancellable(() => deliveries.recordDeliveryCancelled({ input, workflowId: info.workflowId }));
    this.show('cancelled', `Cancelled after ${this.attemptNumber} attempt(s). It can still be re-run: POST /api/v1/webhook-deliveries/${input.deliveryId}/retry.`);
  }

  private readonly failedSummary = () => `Failed after ${this.attemptNumber} attempt(s). Last: ${this.lastFailure ? describeFailure(this.lastFailure) : 'no attempt'}.`;
  // Short, for the timeline: what failed shows next to the event, without opening it.
  private readonly afterAttempts = () => `after ${this.attemptNumber} attempt(s)${this.lastFailure ? ` (${this.lastFailure.error})` : ''}`;

  private show(status: DeliveryStatus, details: string): void {
    this.setSearchAttributes([{ key: DELIVERY_STATUS, value: status }]);
    this.currentDetails = `**${status}** · ${details}`;
    setCurrentDetails(this.currentDetails);
  }

  /** Sets the search attributes given, leaving out (in a lean run) those that already have their value. */
  private setSearchAttributes(pairs: { key: typeof DELIVERY_STATUS; value: string | null }[]): void {
    const current = workflowInfo().typedSearchAttributes;
    const changed = this.lean ? pairs.filter((pair) => (current.get(pair.key) ?? null) !== pair.value) : pairs;
    if (changed.length) upsertSearchAttributes(changed);
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
    const failed = failedAttemptOf(error);
    if (!failed?.plan) throw error;
    return { plan: failed.plan, first: { kind: 'made', outcome: failed.outcome } };
  }
}

/** The plan of runs started before FIRST_ATTEMPT_PATCH: a local activity with the first attempt's admission, or an activity. */
async function beginAsBefore(begin: RunBegin, lean: boolean): Promise<{ plan: DeliveryRunPlan; first: FirstTry }> {
  const plan = lean ? await planning.beginDeliveryRun({ ...begin, admit: true }) : { ...(await deliveries.beginDeliveryRun(begin)), hold: null };
  const first: FirstTry = plan.hold ? { kind: 'held', ...plan.hold } : plan.admitted === true ? { kind: 'admitted' } : { kind: 'none' };
  return { plan, first };
}

/**
 * An attempt that was made and failed (not an outage of ours), from the failure carrying it, with the plan a first
 * task's failure carries after it: an activity's failure has it as its cause; a local activity's is it.
 */
function failedAttemptOf(error: unknown): { outcome: FailedAttempt; plan: DeliveryRunPlan | null } | null {
  const failure = error instanceof ActivityFailure ? error.cause : error;
  if (!(failure instanceof ApplicationFailure)) return null;
  const { type, details } = failure;
  if ((type !== ATTEMPT_FAILED && type !== ATTEMPT_REJECTED) || !details?.[0]) return null;
  const outcome: FailedAttempt = { delivered: false, failure: details[0] as AttemptFailure, permanent: type === ATTEMPT_REJECTED };
  return { outcome, plan: (details[1] as DeliveryRunPlan | undefined) ?? null };
}
