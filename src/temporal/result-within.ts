import type { WorkflowHandle } from '@temporalio/client';
import { setTimeout as delay } from 'node:timers/promises';

/**
 * The workflow's result if it finishes within `ms`, else `{ finished: false }` (it keeps running). A failed
 * workflow rejects, as `handle.result()` does.
 */
export async function resultWithin<T>(handle: WorkflowHandle, ms: number): Promise<{ finished: true; result: T } | { finished: false }> {
  const stopWaiting = new AbortController();
  // Aborted once we stop waiting: a long poll left running would outlive its client and, retried after the client
  // closed, throw from a timer ("Channel has been shut down"), killing the process.
  const result = handle.client.withAbortSignal(stopWaiting.signal, () => handle.result()).then((value: T) => ({ finished: true as const, result: value }));
  // Rejected by our abort after the race is decided; a failure before that reaches the caller through the race.
  result.catch(() => undefined);
  try {
    return await Promise.race([result, delay(ms, { finished: false as const }, { signal: stopWaiting.signal })]);
  } finally {
    stopWaiting.abort();
  }
}
