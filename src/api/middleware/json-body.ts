import type { Middleware } from 'koa';
import bodyParser from 'koa-bodyparser';
import { ApiError } from '../../errors';
import type { AppState } from '../context';
import { assertStorableText } from './storable-text';

const unsupported = (field: string, reason: string) => new ApiError('UNSUPPORTED_MEDIA_TYPE', `Request ${field} ${reason}`, { field, reason });

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads a JSON body: 415 unless it is application/json in UTF-8 (the only charset JSON has, RFC 8259) without
 * a content coding, 413 past `limitBytes`. The exact bytes received are kept in ctx.state.rawBody, which the
 * inbound signature is checked over. Whether the body is usable (valid UTF-8, valid JSON) is decided by
 * requireValidBody, so the inbound endpoint can check the signature and count the request first.
 */
export function readJsonBody(limitBytes: number): Middleware<AppState> {
  const parse = bodyParser({
    enableTypes: ['json'],
    jsonLimit: `${limitBytes}b`,
    strict: true,
    onerror: (error, ctx) => {
      const { status } = error as { status?: number };
      if (status !== 400) throw error;
      (ctx.state as AppState).bodyProblem = ApiError.invalid('body', 'is not valid JSON', 'Request body is not valid JSON');
    },
  });
  return async (ctx, next) => {
    const hasBody = ctx.get('Transfer-Encoding') !== '' || Number(ctx.get('Content-Length') || 0) > 0;
    ctx.state.rawBody = Buffer.alloc(0);
    if (!hasBody) return parse(ctx, next);
    if (!ctx.is('application/json')) throw unsupported('Content-Type', 'must be application/json');
    const charset = ctx.request.charset;
    if (charset && charset.toLowerCase() !== 'utf-8' && charset.toLowerCase() !== 'utf8') throw unsupported('Content-Type', 'charset must be utf-8');
    const coding = ctx.get('Content-Encoding').toLowerCase();
    if (coding && coding !== 'identity') throw unsupported('Content-Encoding', 'is not supported; send the body uncompressed');

    // The parser decodes what it reads (replacing invalid bytes, dropping a byte order mark); a listener
    // attached before it starts reading sees the same chunks undecoded.
    const chunks: Buffer[] = [];
    let size = 0;
    const keep = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limitBytes) chunks.push(chunk);
    };
    ctx.req.on('data', keep);
    const stopKeeping = () => ctx.req.off('data', keep);
    await parse(ctx, async () => {
      stopKeeping();
      ctx.state.rawBody = Buffer.concat(chunks);
      try {
        utf8.decode(ctx.state.rawBody);
      } catch {
        ctx.state.bodyProblem = ApiError.invalid('body', 'is not valid UTF-8', 'Request body is not valid UTF-8');
      }
      await next();
    }).catch((error: unknown) => {
      // A body past the limit is left unread: close the connection after answering rather than read on.
      stopKeeping();
      ctx.set('Connection', 'close');
      throw error;
    });
  };
}

/** 400 for a body readJsonBody found unusable, or holding text PostgreSQL cannot store (naming the field). */
export function requireValidBody(): Middleware<AppState> {
  return async (ctx, next) => {
    if (ctx.state.bodyProblem) throw ctx.state.bodyProblem;
    assertStorableText(ctx.request.body, '');
    await next();
  };
}
