import bodyParser from 'koa-bodyparser';
import type { Middleware } from 'koa';
import { ApiError } from '../../errors';
import type { AppState } from '../context';
import { assertStorableText } from './storable-text';

/**
 * Parses JSON bodies up to `limitBytes` (413 beyond, 400 when malformed) and keeps the raw text in
 * ctx.request.rawBody for signature checks. A body in any other media type is a 415; text PostgreSQL cannot
 * store is a 400 naming the field.
 */
export function jsonBody(limitBytes: number): Middleware<AppState> {
  const parse = bodyParser({ enableTypes: ['json'], jsonLimit: `${limitBytes}b`, strict: true });
  return async (ctx, next) => {
    const hasBody = ctx.get('Transfer-Encoding') !== '' || Number(ctx.get('Content-Length') || 0) > 0;
    if (hasBody && !ctx.is('application/json')) {
      throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Request body must be application/json', {
        field: 'Content-Type',
        reason: 'must be application/json',
      });
    }
    await parse(ctx, async () => {
      assertStorableText(ctx.request.body, '');
      await next();
    });
  };
}
