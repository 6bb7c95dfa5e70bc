import { Worker } from 'node:worker_threads';

/**
 * How long the event loop may go without turning before the process counts as stuck: a workflow that never yields (a
 * loop without an await) would keep every run and activity of the process waiting for ever. Far above the longest
 * synchronous stretch the service has (loading its code at start, a few seconds).
 */
export const STUCK_EVENT_LOOP_MS = 30_000;

/** The watch's thread: it reads the main thread's heartbeat, and kills the process when it stops. */
const WATCH_THREAD = `
const { workerData } = require('node:worker_threads');
const { writeSync } = require('node:fs');
const { beat, stuckAfterMs, checkEveryMs } = workerData;
let last = Atomics.load(beat, 0);
let since = Date.now();
setInterval(() => {
  const now = Atomics.load(beat, 0);
  if (now !== last) {
    last = now;
    since = Date.now();
    return;
  }
  if (Date.now() - since < stuckAfterMs) return;
  writeSync(2, JSON.stringify({ level: 60, time: Date.now(), service: 'construction-integration', msg: 'the event loop has not turned for ' + (Date.now() - since) + ' ms (a workflow or a handler that never yields?); killing the process so that another takes over its work' }) + '\\n');
  process.kill(process.pid, 'SIGKILL');
}, checkEveryMs);
`;

/**
 * Watches this process's event loop from a thread of its own: the main thread bumps a shared counter every
 * `checkEveryMs`, and when it has not moved for `stuckAfterMs` the thread writes a fatal log line to stderr and kills
 * the process with SIGKILL (nothing in it can run any more; its workflow tasks and activities are retried elsewhere).
 * Stands in for the SDK's per-call deadlock detection (src/worker/in-process-workflows.ts). Returns a stop function.
 */
export function watchEventLoop(options: { stuckAfterMs?: number; checkEveryMs?: number } = {}): () => Promise<void> {
  const { stuckAfterMs = STUCK_EVENT_LOOP_MS, checkEveryMs = 1_000 } = options;
  const beat = new Int32Array(new SharedArrayBuffer(4));
  const heart = setInterval(() => Atomics.add(beat, 0, 1), checkEveryMs);
  heart.unref();
  const thread = new Worker(WATCH_THREAD, { eval: true, workerData: { beat, stuckAfterMs, checkEveryMs } });
  thread.unref();
  return async () => {
    clearInterval(heart);
    await thread.terminate();
  };
}
