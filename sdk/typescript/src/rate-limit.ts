import { retryAfterSeconds } from './errors.js';

/** How a 429 is retried: after its Retry-After, at most `maxRetries` times, and only when the wait is at most `maxWaitSeconds`. */
export interface RateLimitRetryOptions {
  /** Retries after the first attempt; 3 by default. */
  maxRetries?: number;
  /**
   * The longest Retry-After worth waiting for; 60 (one minute window) by default. A longer one (the hour or day
   * budget is used up) is not waited out: the 429 is thrown as an ApiError at once.
   */
  maxWaitSeconds?: number;
}

/** rest-api.md 7: the reference client waits 60 seconds when a 429 has no Retry-After. */
const WAIT_WITHOUT_RETRY_AFTER_SECONDS = 60;

/**
 * Sends `attempt()` and, while it answers 429 and `options` allow, waits the response's Retry-After and sends a
 * new attempt. `false` turns retrying off. Whatever is answered last is returned: the caller turns a 429 into
 * an error.
 */
export async function withRateLimitRetries(
  attempt: () => Promise<Response>,
  options: RateLimitRetryOptions | false,
  signal?: AbortSignal | null,
): Promise<Response> {
  const maxRetries = options === false ? 0 : (options.maxRetries ?? 3);
  const maxWaitSeconds = options === false ? 0 : (options.maxWaitSeconds ?? 60);
  for (let retries = 0; ; retries++) {
    const response = await attempt();
    if (response.status !== 429 || retries >= maxRetries) return response;
    const waitSeconds = retryAfterSeconds(response.headers.get('Retry-After')) ?? WAIT_WITHOUT_RETRY_AFTER_SECONDS;
    if (waitSeconds > maxWaitSeconds) return response;
    // The 429's body is not needed; reading it to the end lets its connection be reused.
    await response.arrayBuffer();
    await delay(waitSeconds * 1000, signal ?? undefined);
  }
}

function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const abort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', abort, { once: true });
  });
}
