import type { EntityManager } from '@mikro-orm/postgresql';

export interface RateLimitWindow {
  /** Policy name as it appears in the RateLimit headers. */
  name: string;
  seconds: number;
  limit: number;
}

/**
 * The spec's limits per API key (rest-api.md §8, webhooks.md §8), and a bucket of our own for inbound
 * requests whose signature fails: forged traffic with a leaked key id is limited there, so it cannot use up
 * the budget of the key's signed traffic.
 */
export const RATE_LIMIT_POLICIES = {
  rest: [
    { name: 'minute', seconds: 60, limit: 60 },
    { name: 'hour', seconds: 3600, limit: 1000 },
    { name: 'day', seconds: 86400, limit: 10000 },
  ],
  inbound: [
    { name: 'burst', seconds: 60, limit: 50 },
    { name: 'hour', seconds: 3600, limit: 1000 },
  ],
  inbound_unsigned: [
    { name: 'unsigned-burst', seconds: 60, limit: 20 },
    { name: 'unsigned-hour', seconds: 3600, limit: 200 },
  ],
} satisfies Record<string, RateLimitWindow[]>;

export type RateLimitPolicy = keyof typeof RATE_LIMIT_POLICIES;

export interface WindowUsage extends RateLimitWindow {
  remaining: number;
  /** Unix seconds at which this window starts over. */
  resetsAt: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  windows: WindowUsage[];
}

/**
 * Counts one request against every window of the policy, in PostgreSQL so that all API processes share the
 * budget. A refused request is not counted.
 */
export async function consumeRateLimit(
  em: EntityManager,
  apiKeyId: string,
  policy: RateLimitPolicy,
): Promise<RateLimitDecision> {
  const windows: RateLimitWindow[] = RATE_LIMIT_POLICIES[policy];
  const rows = await em.execute<{ window_seconds: number; used: number; resets_at: number; allowed: boolean }[]>(
    `select window_seconds, used, extract(epoch from resets_at)::float8 as resets_at, allowed
       from consume_rate_limit(?, ?, ?::int[], ?::int[])`,
    [apiKeyId, policy, `{${windows.map((w) => w.seconds).join(',')}}`, `{${windows.map((w) => w.limit).join(',')}}`],
  );
  return {
    allowed: rows.every((r) => r.allowed),
    windows: windows.map((w) => {
      const row = rows.find((r) => r.window_seconds === w.seconds)!;
      return { ...w, remaining: Math.max(0, w.limit - row.used), resetsAt: Math.round(row.resets_at) };
    }),
  };
}
