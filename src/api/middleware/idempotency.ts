import type { Middleware } from 'koa';
import { createHash } from 'node:crypto';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey } from '../../domain/requests/idempotency';
import { ApiError } from '../../errors';
import type { AppState } from '../context';
import { confirmKey } from './authenticate';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * `Idempotency-Key` on writes: the first request with a key runs and its response (200, 201, 204) is kept for 24
 * hours; the same key with the same method, URL and body gets that response again (with
 * `Idempotent-Replayed: true`), with another request it is a 422, and while the first still runs a 409.
 * A request that fails gives its key back, so a retry runs again. Keys belong to the API key that sent them.
 */
export function idempotency(): Middleware<AppState> {
  return async (ctx, next) => {
    if (ctx.headers['idempotency-key'] === undefined || !WRITES.has(ctx.method)) return next();
    const key = ctx.get('Idempotency-Key');
    if (!KEY.test(key)) throw ApiError.invalid('Idempotency-Key', 'must be 1 to 255 visible ASCII characters');
    const { em, principal } = ctx.state;
    // On inbound requests this runs before admission, which would refuse a key revoked since it was cached.
    await confirmKey(ctx);
    const fingerprint = createHash('sha256').update(`${ctx.method} ${ctx.url}\n`).update(ctx.state.rawBody).digest('hex');
    const claim = await claimIdempotencyKey(em, principal.apiKeyId, key, fingerprint);
    if (claim.state === 'mismatch') {
      throw new ApiError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used for another request; use a new key for a new request', {
        field: 'Idempotency-Key',
        reason: 'used for a different request',
      });
    }
    if (claim.state === 'in_progress') {
      throw new ApiError(
        'IDEMPOTENCY_KEY_IN_USE',
        'A request with this Idempotency-Key is still running; retry shortly',
        { field: 'Idempotency-Key', reason: 'in use by a request still running' },
        { 'Retry-After': '1' },
      );
    }
    if (claim.state === 'completed') {
      ctx.status = claim.response.status;
      ctx.set({ ...claim.response.headers, 'Idempotent-Replayed': 'true' });
      if (claim.response.body) {
        ctx.type = 'application/json';
        ctx.body = claim.response.body;
      }
      return;
    }
    try {
      await next();
    } catch (error) {
      await releaseIdempotencyKey(em, principal.apiKeyId, key);
      throw error;
    }
    // 202 is left out: the operation is still running, and a retry should learn how it ended.
    if (ctx.status === 200 || ctx.status === 201 || ctx.status === 204) {
      const location = ctx.response.get('Location');
      const body = ctx.body === undefined || ctx.body === null ? '' : typeof ctx.body === 'string' ? ctx.body : JSON.stringify(ctx.body);
      await completeIdempotencyKey(em, principal.apiKeyId, key, { status: ctx.status, headers: location ? { Location: location } : {}, body });
    } else {
      await releaseIdempotencyKey(em, principal.apiKeyId, key);
    }
  };
}
