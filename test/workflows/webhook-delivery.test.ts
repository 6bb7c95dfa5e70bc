import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { WorkflowFailedError, type WorkflowHandle, WorkflowNotFoundError } from '@temporalio/client';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { DeliveryRunActivities, SendAttemptInput, SendAttemptResult } from '../../activities/webhook-delivery';
import { SETTINGS } from '../../src/config';
import { temporalDeliveryWorkflows } from '../../src/temporal/temporal-delivery-workflows';
import { DELIVERY_HELD } from '../../workflows/search-attributes';
import {
  ATTEMPT_FAILED,
  ATTEMPT_REJECTED,
  type AttemptFailure,
  DELIVERY_FAILED,
  deliveryWorkflowId,
  type DeliveryRunPlan,
  type WebhookDeliveryInput,
  WEBHOOK_DELIVERY,
} from '../../workflows/webhook-delivery.contract';
import { temporalSignal, temporalUpdate } from '../../workflows/messages';
import { type ActivityCall, createTimeSkippingEnv, recordingCalls, runDurationMs, withWorker } from '../helpers/time-skipping';

const endpointEndedSignal = temporalSignal(WEBHOOK_DELIVERY.signals.endpointEnded);
const endpointReadySignal = temporalSignal(WEBHOOK_DELIVERY.signals.endpointReady);
const rerunUpdate = temporalUpdate(WEBHOOK_DELIVERY.updates.rerun);

// workflows/webhook-delivery.ts in skipped time, its activities mocked: the schedule as the service runs it by default.
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const RETRY_DELAYS_MS = SETTINGS.WEBHOOK_RETRY_SCHEDULE.parse(SETTINGS.WEBHOOK_RETRY_SCHEDULE.default);
const RERUN_WAIT_MS = SETTINGS.WEBHOOK_RERUN_WAIT.parse(SETTINGS.WEBHOOK_RERUN_WAIT.default);
/** Virtual time also passes, at its real pace, while the worker works between two timers. */
const SLACK_MS = 5 * SECOND;

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createTimeSkippingEnv();
});
afterAll(() => env?.teardown());

let deliveryNumber = 0;
function newDelivery(): WebhookDeliveryInput {
  const n = String(++deliveryNumber).padStart(12, '0');
  return {
    deliveryId: `00000000-0000-4000-8000-${n}`,
    companyId: '10000000-0000-4000-8000-000000000001',
    endpointId: '20000000-0000-4000-8000-000000000001',
    eventType: 'project.created',
  };
}

/**
 * A delivered attempt, or a failed one as sendDeliveryAttempt throws it: rejected for good (4xx) or retryable; or, for
 * the first attempt only, one whose answer the run's first task did not wait for (its answer then comes from
 * awaitDeliveryAttempt, the next in the list).
 */
type Answer = SendAttemptResult | { type: typeof ATTEMPT_FAILED | typeof ATTEMPT_REJECTED; failure: AttemptFailure } | typeof IN_FLIGHT;
const IN_FLIGHT = 'in flight';

/** An attempt asked for, by whichever activity asked: makeFirstAttempt, sendDeliveryAttempt or awaitDeliveryAttempt. */
interface AskedAttempt {
  by: string;
  input: SendAttemptInput;
  /** The server's clock when the attempt was asked for: skipped time included. */
  atMs: number;
}

/**
 * The delivery-run activities as the real ones behave for a delivery that has no attempt recorded: the plan from the
 * run's attempt (Temporal's retry of a failed run waits for a re-run), the first attempt made by the run's first task
 * (unless the endpoint held it or it is to be made by an activity), and each attempt answered in turn from `answers`.
 */
function deliveryActivities(answers: Answer[], firstHold: DeliveryRunPlan['hold'] = null, firstAdmitted = false) {
  const plan = (runAttempt: number, attemptsMade: number): DeliveryRunPlan => ({
    mode: runAttempt > 1 ? 'await_rerun' : 'schedule',
    nextAttemptNumber: attemptsMade,
    retryDelaysMs: RETRY_DELAYS_MS,
    longestDelayMs: Math.max(...RETRY_DELAYS_MS),
    rerunWaitMs: RERUN_WAIT_MS,
    endpointHost: 'hooks.example.com',
    eventId: null,
    lastFailure: null,
    hold: null,
  });
  let attemptsMade = 0;
  const attempts: AskedAttempt[] = [];
  /** The next answer to attempt `input`: a result, or the attempt's failure thrown (with `more` details after it). */
  async function answer(by: string, input: SendAttemptInput, ...more: unknown[]): Promise<SendAttemptResult | typeof IN_FLIGHT> {
    attempts.push({ by, input, atMs: await env.currentTimeMs() });
    const next = answers.shift();
    if (!next) throw new Error(`No answer left for attempt ${input.attemptNumber}`);
    attemptsMade = input.attemptNumber + 1;
    if (typeof next === 'object' && 'failure' in next) {
      const failure = { ...next.failure, attemptNumber: input.attemptNumber };
      throw ApplicationFailure.create({ type: next.type, message: failure.error, details: [failure, ...more], nonRetryable: true });
    }
    return next;
  }
  const activities: DeliveryRunActivities = {
    async makeFirstAttempt({ input, runAttempt }) {
      const made = plan(runAttempt, attemptsMade);
      if (runAttempt > 1) return { plan: made, first: { kind: 'none' } };
      if (firstHold) return { plan: made, first: { kind: 'held', ...firstHold } };
      if (firstAdmitted) return { plan: made, first: { kind: 'admitted' } };
      const result = await answer('makeFirstAttempt', { deliveryId: input.deliveryId, attemptNumber: 0, trigger: 'automatic', nextAttemptInMs: RETRY_DELAYS_MS[0]! }, made);
      if (result === IN_FLIGHT) return { plan: made, first: { kind: 'in_flight' } };
      if ('throttledForMs' in result) return { plan: made, first: { kind: 'throttled', ...result } };
      if ('heldForMs' in result) return { plan: made, first: { kind: 'held', ...result } };
      return { plan: made, first: { kind: 'delivered', ...result } };
    },
    async beginDeliveryRun({ runAttempt }) {
      return plan(runAttempt, attemptsMade);
    },
    async sendDeliveryAttempt(input: SendAttemptInput) {
      const result = await answer('sendDeliveryAttempt', input);
      if (result === IN_FLIGHT) throw new Error('sendDeliveryAttempt never hands its attempt off');
      return result;
    },
    async awaitDeliveryAttempt(input) {
      const result = await answer('awaitDeliveryAttempt', input);
      if (result === IN_FLIGHT) throw new Error('awaitDeliveryAttempt never hands its attempt off');
      return result;
    },
    async recordDeliveryFailed() {},
    async recordDeliveryCancelled() {},
  };
  return { ...recordingCalls(env, activities), attempts };
}

const httpFailure = (statusCode: number, retryAfterMs: number | null = null): AttemptFailure => ({
  attemptNumber: 0,
  statusCode,
  error: `HTTP ${statusCode}`,
  durationMs: 12,
  responseExcerpt: null,
  retryAfterMs,
});
/** 5xx, 429, timeouts: the schedule decides. */
const retryable = (statusCode: number, retryAfterMs: number | null = null): Answer => ({ type: ATTEMPT_FAILED, failure: httpFailure(statusCode, retryAfterMs) });
/** Other 4xx, and 410 Gone (which also disables the endpoint). */
const rejected = (statusCode: number): Answer => ({ type: ATTEMPT_REJECTED, failure: httpFailure(statusCode) });
/** What the attempt activity answers, without sending, once a 410 disabled the endpoint. */
const disabledEndpoint: Answer = {
  type: ATTEMPT_REJECTED,
  failure: { attemptNumber: 0, statusCode: null, error: 'endpoint is disabled: The endpoint answered 410 Gone', durationMs: 0, responseExcerpt: null, retryAfterMs: null },
};
const delivered: SendAttemptResult = { statusCode: 200, durationMs: 15 };

const named = (calls: ActivityCall[], name: string) => calls.filter((call) => call.name === name);
const attemptsOf = (attempts: AskedAttempt[]) => attempts.map(({ input }) => input);
/** The waits between the attempts, by the server's (skipped) clock. */
const gapsBetweenAttempts = (attempts: AskedAttempt[]) => attempts.map((attempt, i) => (i === 0 ? 0 : attempt.atMs - attempts[i - 1]!.atMs));
function expectGaps(actual: number[], expected: number[]): void {
  expect(actual).toHaveLength(expected.length);
  actual.forEach((gap, i) => {
    expect(gap).toBeGreaterThanOrEqual(expected[i]!);
    expect(gap).toBeLessThan(expected[i]! + SLACK_MS);
  });
}

let started: WorkflowHandle[] = [];
/*
 * Every test lets its runs close while its worker runs: a workflow or activity task left to a worker that has gone
 * stops the test server skipping time for good, terminated or not. This only keeps a test that failed midway from
 * leaving a timer that would fire in the next one.
 */
afterEach(async () => {
  for (const handle of started) await handle.terminate().catch((error: unknown) => expect(error).toBeInstanceOf(WorkflowNotFoundError));
  started = [];
});

async function start(taskQueue: string, input: WebhookDeliveryInput) {
  await temporalDeliveryWorkflows(env.client, { operations: taskQueue, deliveries: taskQueue }).start({ input, endpointUrl: 'https://hooks.example.com/construction', eventId: null, trace: null });
  const handle = env.client.workflow.getHandle(deliveryWorkflowId(input.deliveryId));
  started.push(handle);
  const { runId } = await handle.describe();
  // The first run only: awaiting its result skips time until it closes, not through the run that follows it.
  return { handle, firstRun: env.client.workflow.getHandle(handle.workflowId, runId, { followRuns: false }) };
}

/**
 * How the first run failed, once it has (awaiting it skips time): Temporal retries a failed run, and the run it
 * starts carries the failure (the test server closes the failed run as continued-as-new, a real one as failed).
 */
async function firstRunFailure({ handle, firstRun }: { handle: WorkflowHandle; firstRun: WorkflowHandle }) {
  await expect(firstRun.result()).rejects.toBeInstanceOf(Error);
  const { events } = await handle.fetchHistory();
  const retry = events![0]!.workflowExecutionStartedEventAttributes!;
  expect(retry.attempt).toBe(2);
  expect(retry.continuedFailure?.applicationFailureInfo?.type).toBe(DELIVERY_FAILED);
  return retry.continuedFailure!.message!;
}

/** How the run that waits for a re-run failed (awaiting it skips time). */
async function finalFailure(handle: WorkflowHandle): Promise<ApplicationFailure> {
  const error = await handle.result().then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  expect((error as WorkflowFailedError).cause).toBeInstanceOf(ApplicationFailure);
  return (error as WorkflowFailedError).cause as ApplicationFailure;
}

describe('webhookDelivery in skipped time', () => {
  test('the default schedule is the spec one: 6 attempts, at 0, 1 min, 5 min, 15 min, 1 h and 6 h after each other', () => {
    expect(RETRY_DELAYS_MS).toEqual([1 * MINUTE, 5 * MINUTE, 15 * MINUTE, 1 * HOUR, 6 * HOUR]);
    expect(RERUN_WAIT_MS).toBe(30 * DAY);
  });

  test('an endpoint that keeps failing gets all 6 attempts on the real schedule, then the delivery fails and waits 30 days for a re-run', async () => {
    const { activities, calls, attempts } = deliveryActivities(Array.from({ length: 6 }, () => retryable(503)));
    const input = newDelivery();
    await withWorker(env, activities, async (taskQueue) => {
      const run = await start(taskQueue, input);

      expect(await firstRunFailure(run)).toBe('Delivery Failed after 6 attempt(s). Last: HTTP 503 after 12 ms.');
      expectGaps([await runDurationMs(run.firstRun)], [7 * HOUR + 21 * MINUTE]);
      expectGaps(gapsBetweenAttempts(attempts), [0, ...RETRY_DELAYS_MS]);
      expect(attemptsOf(attempts)).toEqual(
        [1 * MINUTE, 5 * MINUTE, 15 * MINUTE, 1 * HOUR, 6 * HOUR, null].map((nextAttemptInMs, attemptNumber) => ({
          deliveryId: input.deliveryId,
          attemptNumber,
          trigger: 'automatic',
          nextAttemptInMs,
        })),
      );

      // Temporal's retry of the failed run keeps the delivery open for a re-run; none comes within 30 days.
      const waitEnd = await finalFailure(run.handle);
      expect(waitEnd.type).toBe(DELIVERY_FAILED);
      expect(waitEnd.nonRetryable).toBe(true);
      expect(waitEnd.message).toContain('Not re-run within 720 h');
      // It began after the retry's 1 s backoff.
      expectGaps([await runDurationMs(run.handle)], [RERUN_WAIT_MS]);
    });
    // The first attempt is made by the run's first task; the next five by the attempt activity.
    expect(calls.map((call) => call.name)).toEqual([
      'makeFirstAttempt',
      ...Array<string>(5).fill('sendDeliveryAttempt'),
      'recordDeliveryFailed',
      'makeFirstAttempt',
      'recordDeliveryFailed',
    ]);
    expect(named(calls, 'makeFirstAttempt').map((call) => call.args[0])).toEqual([1, 2].map((runAttempt) => ({ input, workflowId: deliveryWorkflowId(input.deliveryId), runAttempt })));
  });

  test('a first attempt the endpoint answers at once: the whole delivery is one workflow task, with no activity task', async () => {
    const { activities, calls } = deliveryActivities([delivered]);
    await withWorker(env, activities, async (taskQueue) => {
      const { handle } = await start(taskQueue, newDelivery());
      expect(await handle.result()).toEqual({ status: 'delivered', attempts: 1 });
      const { events } = await handle.fetchHistory();
      expect(events!.filter((event) => event.workflowTaskCompletedEventAttributes)).toHaveLength(1);
      expect(events!.filter((event) => event.activityTaskScheduledEventAttributes)).toEqual([]);
    });
    expect(calls.map((call) => call.name)).toEqual(['makeFirstAttempt']);
  });

  test("a first attempt whose answer the first task does not wait for is awaited by an activity, and a failure there goes on with the schedule", async () => {
    const { activities, calls, attempts } = deliveryActivities([IN_FLIGHT, retryable(503), delivered]);
    await withWorker(env, activities, async (taskQueue) => {
      const { handle } = await start(taskQueue, newDelivery());
      expect(await handle.result()).toEqual({ status: 'delivered', attempts: 2 });
    });
    expect(calls.map((call) => call.name)).toEqual(['makeFirstAttempt', 'awaitDeliveryAttempt', 'sendDeliveryAttempt']);
    // The awaited answer is attempt 0's: the next attempt is 1, a minute later.
    expect(attemptsOf(attempts).map((a) => a.attemptNumber)).toEqual([0, 0, 1]);
    expectGaps(gapsBetweenAttempts(attempts), [0, 0, 1 * MINUTE]);
  });

  test('a 4xx fails the delivery at once: no further attempt', async () => {
    const { activities, calls } = deliveryActivities([rejected(404)]);
    await withWorker(env, activities, async (taskQueue) => {
      const run = await start(taskQueue, newDelivery());
      expect(await firstRunFailure(run)).toBe('Delivery Failed after 1 attempt(s). Last: HTTP 404 after 12 ms.');
      expect(await runDurationMs(run.firstRun)).toBeLessThan(SLACK_MS);
      // Then it waits for a re-run like any failed delivery (here none comes).
      expect((await finalFailure(run.handle)).message).toContain('Not re-run within 720 h');
    });
    expect(calls.map((call) => call.name)).toEqual(['makeFirstAttempt', 'recordDeliveryFailed', 'makeFirstAttempt', 'recordDeliveryFailed']);
  });

  test('a delivery waiting for its next retry when its endpoint is disabled or deleted makes that attempt at once, which fails for good', async () => {
    const { activities, attempts } = deliveryActivities([retryable(503), disabledEndpoint]);
    await withWorker(env, activities, async (taskQueue) => {
      const run = await start(taskQueue, newDelivery());
      await env.sleep(10 * SECOND);
      expect(attemptsOf(attempts)).toHaveLength(1);
      await run.handle.signal(endpointEndedSignal);
      expect(await firstRunFailure(run)).toMatch(/^Delivery Failed after 2 attempt\(s\)\. Last: endpoint is disabled/);
      // Then it waits for a re-run like any failed delivery (here none comes).
      expect((await finalFailure(run.handle)).message).toContain('Not re-run within 720 h');
    });
    // The second attempt came on the signal, some 10 s after the first, not after the schedule's minute.
    expect(attemptsOf(attempts).map((a) => a.attemptNumber)).toEqual([0, 1]);
    const [, gap] = gapsBetweenAttempts(attempts);
    expect(gap).toBeGreaterThan(5 * SECOND);
    expect(gap).toBeLessThan(30 * SECOND);
  });

  test('an attempt during which its endpoint was disabled (after the signals to retry waits went out) is followed at once by one that fails for good', async () => {
    const endedMeanwhile: Answer = { type: ATTEMPT_FAILED, failure: { ...httpFailure(503), endpointEnded: true } };
    const { activities, attempts } = deliveryActivities([retryable(503), endedMeanwhile, disabledEndpoint]);
    await withWorker(env, activities, async (taskQueue) => {
      const run = await start(taskQueue, newDelivery());
      expect(await firstRunFailure(run)).toMatch(/^Delivery Failed after 3 attempt\(s\)\. Last: endpoint is disabled/);
      expect((await finalFailure(run.handle)).message).toContain('Not re-run within 720 h');
    });
    // The schedule's minute before the second attempt; none before the third.
    expect(attemptsOf(attempts).map((a) => a.attemptNumber)).toEqual([0, 1, 2]);
    expectGaps(gapsBetweenAttempts(attempts), [0, RETRY_DELAYS_MS[0]!, 0]);
  });

  test('a 410 fails the delivery at once, and a re-run while the endpoint is disabled is answered with that attempt while the run waits on', async () => {
    const { activities, calls, attempts } = deliveryActivities([rejected(410), disabledEndpoint]);
    await withWorker(env, activities, async (taskQueue) => {
      const run = await start(taskQueue, newDelivery());
      expect(await firstRunFailure(run)).toBe('Delivery Failed after 1 attempt(s). Last: HTTP 410 after 12 ms.');

      const rerun = await run.handle.executeUpdate(rerunUpdate, { args: [{ reason: 'try again' }] });
      expect(rerun).toEqual({ attemptNumber: 1, delivered: false, statusCode: null, error: 'endpoint is disabled: The endpoint answered 410 Gone after 0 ms' });
      expect((await run.handle.describe()).status.name).toBe('RUNNING');
      expect((await finalFailure(run.handle)).message).toMatch(/^Delivery Failed after 2 attempt\(s\)\. Last: endpoint is disabled/);
    });
    expect(attemptsOf(attempts).map(({ attemptNumber, trigger }) => ({ attemptNumber, trigger }))).toEqual([
      { attemptNumber: 0, trigger: 'automatic' },
      { attemptNumber: 1, trigger: 'manual' },
    ]);
    expect(named(calls, 'recordDeliveryFailed')).toHaveLength(3);
  });

  test("the receiver's Retry-After is honoured when longer than the schedule's wait, up to the longest wait (6 h)", async () => {
    const { activities, calls, attempts } = deliveryActivities([retryable(503, 10 * MINUTE), retryable(429, 30 * SECOND), retryable(429, 2 * DAY), delivered]);
    await withWorker(env, activities, async (taskQueue) => {
      const { handle } = await start(taskQueue, newDelivery());
      expect(await handle.result()).toEqual({ status: 'delivered', attempts: 4 });
    });
    // 10 min instead of 1 min; the schedule's 5 min over a shorter Retry-After; 6 h instead of 2 days.
    expectGaps(gapsBetweenAttempts(attempts), [0, 10 * MINUTE, 5 * MINUTE, 6 * HOUR]);
    expect(calls.map((call) => call.name)).not.toContain('recordDeliveryFailed');
  });

  test('a manual re-run after the delivery failed makes one attempt, numbered after the recorded ones, and delivers', async () => {
    const { activities, attempts } = deliveryActivities([rejected(404), delivered]);
    await withWorker(env, activities, async (taskQueue) => {
      const run = await start(taskQueue, newDelivery());
      await firstRunFailure(run);

      const rerun = await run.handle.executeUpdate(rerunUpdate, { args: [{ reason: 'endpoint fixed' }] });
      expect(rerun).toEqual({ attemptNumber: 1, delivered: true, statusCode: 200, error: null });
      expect(await run.handle.result()).toEqual({ status: 'delivered', attempts: 2 });
    });
    expect(attemptsOf(attempts)).toEqual([
      expect.objectContaining({ attemptNumber: 0, trigger: 'automatic' }),
      expect.objectContaining({ attemptNumber: 1, trigger: 'manual', nextAttemptInMs: null }),
    ]);
  });

  test('a re-run during a wait of the schedule makes the attempt at once, and the schedule goes on after it', async () => {
    const { activities, attempts } = deliveryActivities([retryable(503), retryable(503), retryable(503), delivered]);
    await withWorker(env, activities, async (taskQueue) => {
      const { handle } = await start(taskQueue, newDelivery());
      // The first two attempts (0 and 1 min) and part of the 5 min wait after them.
      await env.sleep(3 * MINUTE);
      const rerun = await handle.executeUpdate(rerunUpdate, { args: [{}] });
      expect(rerun).toEqual({ attemptNumber: 2, delivered: false, statusCode: 503, error: 'HTTP 503 after 12 ms' });
      expect(await handle.result()).toEqual({ status: 'delivered', attempts: 4 });
    });
    const [first, second, manual, next] = attempts;
    expect(attemptsOf(attempts).map((a) => a.trigger)).toEqual(['automatic', 'automatic', 'manual', 'automatic']);
    expect(manual!.atMs - first!.atMs).toBeLessThan(3 * MINUTE + SLACK_MS);
    expect(manual!.atMs - second!.atMs).toBeLessThan(5 * MINUTE);
    // After the re-run (the third attempt) the schedule's third wait: 15 min.
    expectGaps([next!.atMs - manual!.atMs], [15 * MINUTE]);
  });

  test('an attempt its endpoint holds is not an attempt: the run waits, without a worker slot, until the endpoint wakes it, then makes it with the same number', async () => {
    const { activities, attempts } = deliveryActivities([retryable(503), { heldForMs: 2 * HOUR, reason: 'circuit_open' }, delivered]);
    await withWorker(env, activities, async (taskQueue) => {
      const { handle } = await start(taskQueue, newDelivery());
      // The first attempt failed; the second, a minute later, is held by the open breaker.
      await env.sleep(1 * MINUTE + 10 * SECOND);
      const waiting = await handle.describe();
      expect(waiting.status.name).toBe('RUNNING');
      expect(waiting.typedSearchAttributes.get(DELIVERY_HELD)).toBe('circuit_open');
      await env.sleep(20 * MINUTE);
      await handle.signal(endpointReadySignal);
      expect(await handle.result()).toEqual({ status: 'delivered', attempts: 2 });
      expect((await handle.describe()).typedSearchAttributes.get(DELIVERY_HELD)).toBeUndefined();
    });
    expect(attemptsOf(attempts).map((a) => a.attemptNumber)).toEqual([0, 1, 1]);
    const [, held, made] = attempts;
    // Made when woken (some 20 min after the hold began), not at the end of the 2 h hold.
    expect(made!.atMs - held!.atMs).toBeGreaterThanOrEqual(20 * MINUTE);
    expect(made!.atMs - held!.atMs).toBeLessThan(21 * MINUTE);
  });

  test('a first attempt the endpoint holds when the run plans waits from the start, and is made when the endpoint wakes the run', async () => {
    const { activities, calls, attempts } = deliveryActivities([delivered], { heldForMs: 2 * HOUR, reason: 'circuit_open' });
    await withWorker(env, activities, async (taskQueue) => {
      const { handle } = await start(taskQueue, newDelivery());
      await env.sleep(20 * MINUTE);
      const waiting = await handle.describe();
      expect(waiting.status.name).toBe('RUNNING');
      expect(waiting.typedSearchAttributes.get(DELIVERY_HELD)).toBe('circuit_open');
      expect(attemptsOf(attempts)).toEqual([]);
      await handle.signal(endpointReadySignal);
      expect(await handle.result()).toEqual({ status: 'delivered', attempts: 1 });
      expect((await handle.describe()).typedSearchAttributes.get(DELIVERY_HELD)).toBeUndefined();
    });
    expect(attemptsOf(attempts).map((a) => a.attemptNumber)).toEqual([0]);
    const [plan] = named(calls, 'makeFirstAttempt');
    const [made] = attempts;
    // Made when woken, some 20 min after the plan (whose time is read a moment after it ran), not after the 2 h hold.
    expect(made!.atMs - plan!.atMs).toBeGreaterThanOrEqual(20 * MINUTE - SECOND);
    expect(made!.atMs - plan!.atMs).toBeLessThan(21 * MINUTE);
  });

  test("a first attempt waiting for its record's earlier delivery is held, says so, and is made once that delivery's end wakes it", async () => {
    const { activities, calls, attempts } = deliveryActivities([delivered], { heldForMs: 5 * MINUTE, reason: 'awaiting_predecessor' });
    await withWorker(env, activities, async (taskQueue) => {
      const { handle } = await start(taskQueue, newDelivery());
      await env.sleep(2 * MINUTE);
      const waiting = await handle.describe();
      expect(waiting.typedSearchAttributes.get(DELIVERY_HELD)).toBe('awaiting_predecessor');
      expect(attemptsOf(attempts)).toEqual([]);
      await handle.signal(endpointReadySignal);
      expect(await handle.result()).toEqual({ status: 'delivered', attempts: 1 });
    });
    const [plan] = named(calls, 'makeFirstAttempt');
    const [made] = attempts;
    // Made when woken, not at the end of its wait; none of its attempts used meanwhile.
    expect(made!.atMs - plan!.atMs).toBeLessThan(3 * MINUTE);
    expect(attemptsOf(attempts).map((a) => a.attemptNumber)).toEqual([0]);
  });

  test('a run begun before plans were local activities replays with this code: it keeps its plan activity and search attributes', async () => {
    // Recorded from the workflow before the change (main at c003a0c): a 503, a hold, a wake-up, then delivered.
    const json = JSON.parse(readFileSync(path.join(__dirname, 'histories/webhook-delivery-remote-plan.json'), 'utf8'));
    const history = historyFromJSON(json);
    const scheduled = history.events!.filter((event) => event.activityTaskScheduledEventAttributes).map((event) => event.activityTaskScheduledEventAttributes!.activityType!.name);
    expect(scheduled).toEqual(['beginDeliveryRun', 'sendDeliveryAttempt', 'sendDeliveryAttempt', 'sendDeliveryAttempt']);
    await Worker.runReplayHistory({ workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! } }, history, 'webhook-delivery/00000000-0000-4000-8000-00000000a001');
  });

  test('a run begun while plans were local activities replays with this code: its plan, its attempts as activities, its search attributes', async () => {
    // Recorded from the workflow before the first attempt moved into the first task (main at 24ca1a6): a 503, a hold,
    // a wake-up, then delivered.
    const json = JSON.parse(readFileSync(path.join(__dirname, 'histories/webhook-delivery-local-plan.json'), 'utf8'));
    const history = historyFromJSON(json);
    const markers = history.events!.filter((event) => event.markerRecordedEventAttributes).map((event) => event.markerRecordedEventAttributes!.markerName);
    expect(markers).toEqual(['core_patch', 'core_local_activity']);
    const scheduled = history.events!.filter((event) => event.activityTaskScheduledEventAttributes).map((event) => event.activityTaskScheduledEventAttributes!.activityType!.name);
    expect(scheduled).toEqual(['sendDeliveryAttempt', 'sendDeliveryAttempt', 'sendDeliveryAttempt']);
    await Worker.runReplayHistory({ workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! } }, history, 'webhook-delivery/00000000-0000-4000-8000-00000000b001');
  });

  test('runs begun since the first attempt moved into the first task replay with this code: each kind of first try, each plan mode', async () => {
    // Recorded from the workflow at 6d95a0a through the tests of this file and a few more runs (test sends, re-runs, an
    // unknown signal, a run started by hand without WebhookDeliveryStart), so a change to the workflow's code that
    // changes its commands fails here. A failed run that Temporal retries closes as the real server records it (failed,
    // retry in progress), not as the test server does (continued as new), which the replayer would refuse.
    const runs = JSON.parse(readFileSync(path.join(__dirname, 'histories/webhook-delivery-first-task.json'), 'utf8')) as { name: string; workflowId: string; history: unknown }[];
    const histories = runs.map(({ workflowId, history }) => ({ workflowId, history: historyFromJSON(history) }));
    const failed: string[] = [];
    for await (const result of Worker.runReplayHistories({ workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! } }, histories)) {
      if (result.error) failed.push(`${runs.find((run) => run.workflowId === result.workflowId)?.name}: ${result.error.message}`);
    }
    expect(failed).toEqual([]);
    expect(runs).toHaveLength(23);
  });

  test('a held attempt nobody wakes asks again when its wait ends', async () => {
    const { activities, attempts } = deliveryActivities([{ heldForMs: 5 * MINUTE, reason: 'endpoint_busy' }, delivered]);
    await withWorker(env, activities, async (taskQueue) => {
      const { handle } = await start(taskQueue, newDelivery());
      expect(await handle.result()).toEqual({ status: 'delivered', attempts: 1 });
    });
    expect(attemptsOf(attempts).map((a) => a.attemptNumber)).toEqual([0, 0]);
    expectGaps(gapsBetweenAttempts(attempts), [0, 5 * MINUTE]);
  });

  test("a first attempt the plan admitted skips asking the endpoint again on its first try only: not after the endpoint's rate limit, nor for the next attempt", async () => {
    const { activities, attempts } = deliveryActivities([{ throttledForMs: 2 * SECOND }, retryable(503), delivered], null, true);
    await withWorker(env, activities, async (taskQueue) => {
      const { handle } = await start(taskQueue, newDelivery());
      expect(await handle.result()).toEqual({ status: 'delivered', attempts: 2 });
    });
    expect(attemptsOf(attempts).map((a) => [a.attemptNumber, a.admitted ?? false])).toEqual([
      [0, true],
      [0, false],
      [1, false],
    ]);
  });

  test('a run cancelled while it waits records the delivery as cancelled', async () => {
    const { activities, calls } = deliveryActivities([retryable(503)]);
    const input = newDelivery();
    await withWorker(env, activities, async (taskQueue) => {
      const { handle } = await start(taskQueue, input);
      await env.sleep(30 * SECOND);
      await handle.cancel();
      const error = await handle.result().then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(WorkflowFailedError);
      expect((error as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    });
    expect(calls.map(({ name }) => name)).toEqual(['makeFirstAttempt', 'recordDeliveryCancelled']);
    expect(calls.at(-1)!.args).toEqual([{ input, workflowId: deliveryWorkflowId(input.deliveryId) }]);
  });
});
