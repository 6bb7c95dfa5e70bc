import type { Middleware } from 'koa';
import { firstUseOfSignature } from '../../../domain/requests/replay-guard';
import { ApiError } from '../../../errors';
import type { AppState } from '../../context';

/**
 * 409 REPLAYED_REQUEST for a signature the key already sent within the tolerance window: a captured request
 * cannot be played again. A request with an Idempotency-Key may be resent as it is: the key makes it safe.
 */
export function replayGuard(): Middleware<AppState> {
  return async (ctx, next) => {
    if (ctx.headers['idempotency-key'] !== undefined) return next();
    const signature = ctx.get('X-Webhook-Signature');
    if (!(await firstUseOfSignature(ctx.state.em, ctx.state.principal.apiKeyId, signature))) {
      throw new ApiError(
        'REPLAYED_REQUEST',
        'This signed request was already received; sign each request anew (a new X-Webhook-Timestamp), or send an Idempotency-Key to resend one safely',
        { field: 'X-Webhook-Signature', reason: 'already used' },
      );
    }
    await next();
  };
}
