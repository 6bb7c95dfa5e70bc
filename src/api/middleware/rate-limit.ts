import type { Middleware } from 'koa';
import { signatureRecordSeconds } from '../../crypto/webhook-signature';
import { admitRequest, type RateLimitDecision, type RateLimitPolicy, releaseSignature } from '../../domain/accounts/rate-limits';
import { ApiError } from '../../errors';
import type { AppState } from '../context';
import { invalidKey } from './authenticate';
import { toApiError } from './error-handler';

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
 * Admits the request in one statement (admit_request): 401 when the key was revoked, then counts it against the
 * key's budget (shared by all API processes) and answers 429 past it.
 *
 * With `replayGuard` (inbound), the signature is recorded in the same statement, while any api host would still
 * accept its timestamp, and a request whose signature is on record is a 409 REPLAYED_REQUEST, unless both carry the
 * same Idempotency-Key (which makes a resend safe; the signature does not cover the key, so a new key makes no copy
 * new). Replays are counted with the requests whose signature fails (inbound_unsigned): a flood of copies meets 429s
 * without using up the budget of the key's own requests. A signature is spent only by a request that is processed
 * (answered 2xx, or 4xx about its content): admit_request keeps none of a request it refuses with 429, and the
 * signature of one that fails with a 5xx is given back here, so the sender may resend the same bytes.
 */
export function rateLimit(policy: RateLimitPolicy, options: { multiplier: number; replayGuard?: boolean }): Middleware<AppState> {
  const countReplay = options.replayGuard ? rateLimit('inbound_unsigned', { multiplier: options.multiplier }) : null;
  return async (ctx, next) => {
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
      return countReplay!(ctx, () => {
        throw new ApiError(
          'REPLAYED_REQUEST',
          'This signed request was already processed, or is being processed; sign each request anew (a new X-Webhook-Timestamp), or send an Idempotency-Key to resend one safely',
          { field: 'X-Webhook-Signature', reason: 'already used' },
        );
      });
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
    // With an Idempotency-Key the signature stays bound to the key: a resend with the key gets through as it is, and
    // the record may be an earlier request's with the same key.
    if (!signature || signature.idempotencyKey !== null) return next();
    try {
      await next();
    } catch (error) {
      if (toApiError(error, ctx.method, ctx.path, ctx.state.requestId).status >= 500) {
        await releaseSignature(ctx.state.em, ctx.state.principal.apiKeyId, signature.value).catch((releaseError: unknown) =>
          ctx.state.log.warn({ err: releaseError }, 'the signature of a failed request could not be given back; its resend will be refused as a replay'),
        );
      }
      throw error;
    }
  };
}
