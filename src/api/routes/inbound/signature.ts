import type { Middleware } from 'koa';
import { verifyWebhookSignature } from '../../../crypto/webhook-signature';
import type { ApiKeyCache } from '../../../domain/accounts/api-key-cache';
import { ApiError } from '../../../errors';
import type { AppState } from '../../context';
import { rateLimit } from '../../middleware/rate-limit';

/**
 * 403 INVALID_SIGNATURE unless X-Webhook-Signature is the HMAC of `<X-Webhook-Timestamp>.<the exact bytes
 * received>` with the key's signing secret. A refused request is counted in the key's bucket for unsigned
 * traffic (429 once it is used up), never in the bucket of its signed requests.
 */
export function verifiedSignature(apiKeys: ApiKeyCache, rateLimitMultiplier: number): Middleware<AppState> {
  const countUnsigned = rateLimit('inbound_unsigned', { multiplier: rateLimitMultiplier });
  return async (ctx, next) => {
    const check = verifyWebhookSignature({
      secret: apiKeys.signingSecret(ctx.state.principal),
      timestamp: ctx.get('X-Webhook-Timestamp') || undefined,
      signature: ctx.get('X-Webhook-Signature') || undefined,
      rawBody: ctx.state.rawBody,
    });
    if (check.valid) return next();
    await countUnsigned(ctx, () => {
      throw new ApiError('INVALID_SIGNATURE', `Signature verification failed: ${check.field} ${check.reason}`, {
        field: check.field,
        reason: check.reason,
      });
    });
  };
}
