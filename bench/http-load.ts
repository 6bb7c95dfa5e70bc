import autocannon from 'autocannon';

/** What one load phase measured: requests served with a 2xx per second, and latency of all requests. */
export interface LoadResult {
  /** Requests answered with a 2xx, and how many per second. */
  served: number;
  rps: number;
  /** Responses of any status. */
  answered: number;
  seconds: number;
  p50: number;
  p99: number;
  max: number;
  non2xx: number;
  errors: number;
}

export interface LoadOptions {
  url: string;
  seconds: number;
  connections: number;
  method?: 'GET' | 'POST';
  /** Path, headers and body of each request (called once per request). */
  next(): { path?: string; headers?: Record<string, string>; body?: string };
}

/** Closed-loop HTTP load with autocannon: `connections` requests in flight for `seconds`. */
export async function load(options: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    method: options.method ?? 'GET',
    connections: options.connections,
    duration: options.seconds,
    requests: [{ setupRequest: (req) => ({ ...req, ...options.next() }) }],
  });
  return {
    served: result['2xx'],
    rps: result['2xx'] / result.duration,
    answered: result['2xx'] + result.non2xx,
    seconds: result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

export const percentile = (sorted: readonly number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : NaN;

/** The middle value, or the mean of the two middle ones. */
export const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return (sorted[(sorted.length - 1) >> 1]! + sorted[sorted.length >> 1]!) / 2;
};

/** p50, p99 and max of latencies (ms). */
export function summary(latencies: number[]): { p50: number; p99: number; max: number } {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? NaN };
}
