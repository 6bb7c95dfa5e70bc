import type { Middleware } from 'koa';
import { signatureRecordSeconds } from '../../crypto/webhook-signature';
import { admitRequest, type RateLimitDecision, type RateLimitPolicy } from '../../domain/accounts/rate-limits';
import { ApiError } from '../../errors';
import type { AppState } from '../context';
import { invalidKey } from './authenticate';

/**
 * Response headers for a decision: the IETF RateLimit-Policy and RateLimit fields for every window, and the
 * widespread X-RateLimit-* trio for the tightest window (the one with the fewest requests left).
 */
export function rateLimitHeaders(decision: RateLimitDecision, nowSeconds: number): Record<string, string> {
  const secondsLeft = (resetsAt: number) => Math.max(0, resetsAt - nowSeconds);
  const tightest = decision.windows.reduce((a, b) => (b.remaining < a.remaining ? b : a));
  const headers: Record<string, string> = {
    'RateLimit-Policy': decision.windows.map((w) => `"${w.name}";q=${w.limit};w=${w.seconds}`).join(', '),
    RateLimit: decision.windows.map((w) => `"${w.name}";r=${w.remaining};t=${secondsLeft(w.resetsAt)}`).join(', '),
    'X-RateLimit-Limit': String(tightest.limit),
    'X-RateLimit-Remaining': String(tightest.remaining),
    'X-RateLimit-Reset': String(tightest.resetsAt),
  };
  if (!decision.allowed) {
    const exhausted = decision.windows.filter((w) => w.remaining === 0);
    headers['Retry-After'] = String(Math.max(1, ...exhausted.map((w) => secondsLeft(w.resetsAt))));
  }
  return headers;
}

/**
 * Admits the request in one statement (admit_request): 401 when the key was revoked, 409 REPLAYED_REQUEST
 * with `replayGuard` for an inbound signature the key already sent, unless both carry the same Idempotency-Key
 * (which makes a resend safe; the signature does not cover the key, so a new key makes no copy new), then counts it against the key's budget (shared by all API
 * processes) and answers 429 past it.
 */
export function rateLimit(policy: RateLimitPolicy, options: { multiplier: number; replayGuard?: boolean }): Middleware<AppState> {
  return async (ctx, next) => {
    // A signature covers its timestamp, so a copy is refused as stale once no api host accepts the timestamp; its
    // record is kept until then.
    const signature = options.replayGuard
      ? {
          value: ctx.get('X-Webhook-Signature'),
          ttlSeconds: signatureRecordSeconds(ctx.get('X-Webhook-Timestamp')),
          idempotencyKey: ctx.headers['idempotency-key'] === undefined ? null : ctx.get('Idempotency-Key'),
        }
      : null;
    const admission = await admitRequest(ctx.state.em, ctx.state.principal.apiKeyId, policy, signature, options.multiplier);
    if (admission.outcome === 'revoked') throw invalidKey();
    ctx.state.keyConfirmed = true;
    if (admission.outcome === 'replayed') {
      throw new ApiError(
        'REPLAYED_REQUEST',
        'This signed request was already received; sign each request anew (a new X-Webhook-Timestamp), or send an Idempotency-Key to resend one safely',
        { field: 'X-Webhook-Signature', reason: 'already used' },
      );
    }
    const { decision } = admission;
    const headers = rateLimitHeaders(decision, Math.floor(Date.now() / 1000));
    ctx.set(headers);
    if (!decision.allowed) {
      ctx.state.metrics.rateLimited.inc({ policy });
      const exhausted = decision.windows.filter((w) => w.remaining === 0).map((w) => `${w.limit} per ${w.name}`);
      throw new ApiError('RATE_LIMITED', `Rate limit exceeded (${exhausted.join(', ')}); retry after ${headers['Retry-After']} seconds`, {
        field: 'X-API-Key',
        reason: `rate limit exceeded: ${exhausted.join(', ')}`,
      });
    }
    await next();
  };
}
