import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import { ApiError } from '../../errors';
import type { AppState } from '../context';

/** A route that takes a file as its body (an attachment): the media types it accepts and its size limit. */
export interface FileBody {
  types: readonly string[];
  maxBytes: number;
}

/** The body's bytes, or null past `maxBytes`: reading stops there (the connection is then closed after the answer). */
function readAtMost(req: IncomingMessage, maxBytes: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) return void chunks.push(chunk);
      stop();
      req.pause();
      resolve(null);
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks));
    };
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

const tooLarge = (maxBytes: number) => new ApiError('PAYLOAD_TOO_LARGE', `The file is larger than ${maxBytes} bytes`, { field: 'body', reason: `exceeds ${maxBytes} bytes` });

/**
 * Reads a file body into ctx.state.rawBody, exactly as sent: 415 unless its Content-Type is one of `types` (no
 * content coding), 413 past `maxBytes` (refused from Content-Length before reading when it says so), 400 when
 * empty. Runs before the JSON body reader, which would refuse it.
 */
export function fileBody({ types, maxBytes }: FileBody): Middleware<AppState> {
  return async (ctx, next) => {
    const type = ctx.get('Content-Type').split(';')[0]!.trim().toLowerCase();
    if (!types.includes(type)) {
      throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `Content-Type must be one of: ${types.join(', ')}`, { field: 'Content-Type', reason: `must be one of: ${types.join(', ')}` });
    }
    const coding = ctx.get('Content-Encoding').toLowerCase();
    if (coding && coding !== 'identity') {
      throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Content-Encoding is not supported; send the file as it is', { field: 'Content-Encoding', reason: 'is not supported' });
    }
    if (Number(ctx.get('Content-Length') || 0) > maxBytes) {
      ctx.set('Connection', 'close');
      throw tooLarge(maxBytes);
    }
    const bytes = await readAtMost(ctx.req, maxBytes);
    if (bytes === null) {
      ctx.set('Connection', 'close');
      throw tooLarge(maxBytes);
    }
    if (bytes.length === 0) throw ApiError.invalid('body', 'is empty: send the file as the request body');
    ctx.state.rawBody = bytes;
    ctx.state.fileType = type;
    await next();
  };
}
