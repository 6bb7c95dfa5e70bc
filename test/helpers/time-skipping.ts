import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { SEARCH_ATTRIBUTES } from '../../workflows/search-attributes';
import { waitFor } from './processes';
import { provisionTemporalTestServer } from './temporal-test-server';

/**
 * A Temporal test server of its own for one test file: time is skipped whenever every workflow waits on a timer, so
 * a six-hour schedule runs in milliseconds. One per file: skipped time is the server's, shared by all its clients.
 */
export async function createTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  // Quiet: the SDK's core warns at every worker start that the test server does not advertise a capability.
  Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } }, shutdownSignals: [] });
  const env = await startTestServer(provisionTemporalTestServer());
  // As on every server the workflows run on: they set these, and the test server refuses unknown ones.
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(SEARCH_ATTRIBUTES.map((key) => [key.name, temporal.api.enums.v1.IndexedValueType[`INDEXED_VALUE_TYPE_${key.type}`]])),
  });
  return env;
}

/**
 * Time to keep starting the test server in, within the 60 s jest gives `beforeAll`. The SDK waits 5 s for it to
 * listen, and ends the attempt then; the JVM takes 2–4 s on a machine under a CI's load, and more in its spikes.
 */
const TEST_SERVER_START_BUDGET_MS = 40_000;

/** A time-skipping environment on a test server of its own, started again while a start times out and time is left. */
function startTestServer(executable: string): Promise<TestWorkflowEnvironment> {
  return waitFor(
    async () => {
      try {
        return await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: executable } } });
      } catch (error) {
        if (!/did not start within/.test(String(error))) throw error;
        return undefined;
      }
    },
    TEST_SERVER_START_BUDGET_MS,
    'the Temporal test server to start',
  );
}

/**
 * Runs `body` while a worker serves a task queue of its own with the workflows (the bundle global setup builds)
 * and the given activities; `body` gets the task queue.
 */
export async function withWorker<T>(env: TestWorkflowEnvironment, activities: object, body: (taskQueue: string) => Promise<T>): Promise<T> {
  const taskQueue = `workflow-test-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! },
    activities,
  });
  return worker.runUntil(() => body(taskQueue));
}

/**
 * How long a closed run took by the server's clock. Not the clock after awaiting the result: once every run has
 * closed, the server may skip ahead to any timer left (e.g. a run timeout) before the client takes skipping back.
 */
export async function runDurationMs(run: WorkflowHandle): Promise<number> {
  const { startTime, closeTime } = await run.describe();
  if (!closeTime) throw new Error(`The run ${run.workflowId} has not closed`);
  return closeTime.getTime() - startTime.getTime();
}

export interface ActivityCall {
  name: string;
  args: unknown[];
  /** The server's clock when the attempt ran: skipped time included. */
  atMs: number;
}

type Activities = Record<string, (...args: any[]) => Promise<unknown>>;

/** The activities, each recording its calls in `calls` (in the order the worker made them) before it runs. */
export function recordingCalls<A extends Activities>(env: TestWorkflowEnvironment, activities: A): { activities: A; calls: ActivityCall[] } {
  const calls: ActivityCall[] = [];
  const recording = Object.fromEntries(
    Object.entries(activities).map(([name, activity]) => [
      name,
      async (...args: unknown[]) => {
        const call: ActivityCall = { name, args, atMs: 0 };
        calls.push(call);
        call.atMs = await env.currentTimeMs();
        return activity(...args);
      },
    ]),
  ) as A;
  return { activities: recording, calls };
}
