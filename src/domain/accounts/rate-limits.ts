import type { EntityManager } from '@mikro-orm/postgresql';
import { PreparedStatement } from '../../db/prepared-statement';

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
 * What the database says of a request, in one statement: its key was revoked (since this process cached
 * it); its inbound signature was already used (a replay); or it was counted (or, over a limit, not).
 */
export type Admission = { outcome: 'revoked' } | { outcome: 'replayed' } | { outcome: 'counted'; decision: RateLimitDecision };

const ADMIT_REQUEST = new PreparedStatement<{ outcome: 'revoked' | 'replayed' | 'allowed' | 'limited'; window_seconds: number; used: number; resets_at: number }>(
  'admit_request',
  `select outcome, window_seconds, used, extract(epoch from resets_at)::float8 as resets_at
     from admit_request($1, $2, $3::int[], $4::int[], $5, $6, $7)`,
  // Every request's bookkeeping, without a span of its own (its time is the request span's): that span was one of a
  // traced request's three or four and cost the api 3–10 % of its CPU per request (docs/benchmarks.md, phase 10).
  { traced: false },
);

/**
 * Admits a request of `apiKeyId` (admit_request() in PostgreSQL, so all API processes share one budget):
 * refuses a revoked key, records `signature` when given for `ttlSeconds` (refusing one the key sent before and
 * still on record, unless both came with the same Idempotency-Key), then counts the request against every window of
 * the policy at once, each limit multiplied by `multiplier` (RATE_LIMIT_MULTIPLIER: 1 but in load and fuzz tests).
 * Nothing is counted for a revoked key, a replay, or a request over a limit, and a request over a limit leaves no
 * signature on record.
 */
export async function admitRequest(
  em: EntityManager,
  apiKeyId: string,
  policy: RateLimitPolicy,
  signature: { value: string; ttlSeconds: number; idempotencyKey: string | null } | null,
  multiplier = 1,
): Promise<Admission> {
  const windows: RateLimitWindow[] = RATE_LIMIT_POLICIES[policy].map((w) => ({ ...w, limit: w.limit * multiplier }));
  const rows = await ADMIT_REQUEST.rows(em, [
    apiKeyId,
    policy,
    `{${windows.map((w) => w.seconds).join(',')}}`,
    `{${windows.map((w) => w.limit).join(',')}}`,
    signature?.value ?? null,
    signature?.ttlSeconds ?? 0,
    signature?.idempotencyKey ?? null,
  ]);
  const outcome = rows[0]!.outcome;
  if (outcome === 'revoked' || outcome === 'replayed') return { outcome };
  return {
    outcome: 'counted',
    decision: {
      allowed: outcome === 'allowed',
      windows: windows.map((w) => {
        const row = rows.find((r) => r.window_seconds === w.seconds)!;
        return { ...w, remaining: Math.max(0, w.limit - row.used), resetsAt: Math.round(row.resets_at) };
      }),
    },
  };
}

/**
 * Gives back the signature admitRequest recorded for a request without an Idempotency-Key that was not processed
 * (it failed with a 5xx), so the same bytes are accepted again. Such a record can only be that request's: a copy
 * without the key is refused while it exists, and one with a key never matches it.
 */
export async function releaseSignature(em: EntityManager, apiKeyId: string, signature: string): Promise<void> {
  await em.execute('delete from inbound_signatures where api_key_id = ? and signature = ? and idempotency_key is null', [apiKeyId, signature]);
}
