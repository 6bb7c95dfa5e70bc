import type { WorkflowHandle } from '@temporalio/client';
import { setTimeout as delay } from 'node:timers/promises';

/**
 * The workflow's result if it finishes within `ms`, else `{ finished: false }` (it keeps running). A failed
 * workflow rejects, as `handle.result()` does.
 */
export async function resultWithin<T>(handle: WorkflowHandle, ms: number): Promise<{ finished: true; result: T } | { finished: false }> {
  const timer = new AbortController();
  try {
    return await Promise.race([
      handle.result().then((result: T) => ({ finished: true as const, result })),
      delay(ms, { finished: false as const }, { signal: timer.signal }),
    ]);
  } finally {
    timer.abort();
  }
}
