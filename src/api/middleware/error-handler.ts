import { DriverException } from '@mikro-orm/core';
import { ServiceError } from '@temporalio/client';
import type { Middleware } from 'koa';
import { apiErrorFromDatabase, isDatabaseUnavailable } from '../../db/database-errors';
import { ApiError } from '../../errors';
import type { AppState } from '../context';

interface HttpLikeError {
  status?: number;
  type?: string;
}

/** Turns anything thrown below into the spec's error body; unexpected errors are logged, never echoed. */
export function toApiError(error: unknown, method: string, path: string, requestId: string): ApiError {
  if (error instanceof ApiError) return error;
  const fromDatabase = apiErrorFromDatabase(error);
  if (fromDatabase) return fromDatabase;
  // Errors of the body parser and router carry an HTTP status; a JSON syntax error comes as a SyntaxError.
  const http = error as HttpLikeError;
  if (!(error instanceof DriverException) && typeof http.status === 'number' && (http.status < 500 || http.status === 501)) {
    switch (http.status) {
      case 400:
        return error instanceof SyntaxError || http.type === 'entity.parse.failed'
          ? ApiError.invalid('body', 'is not valid JSON', 'Request body is not valid JSON')
          : ApiError.invalid('request', 'is malformed', 'Malformed request');
      case 405:
      case 501:
        return new ApiError('METHOD_NOT_ALLOWED', `${method} is not supported on ${path}`, { field: 'method', reason: 'not allowed' });
      case 413:
        return new ApiError('PAYLOAD_TOO_LARGE', 'Request body is too large', { field: 'body', reason: 'exceeds the size limit' });
      case 415:
        return new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Request body must be application/json', { field: 'Content-Type', reason: 'must be application/json' });
    }
  }
  if (error instanceof ServiceError) {
    return new ApiError('SERVICE_UNAVAILABLE', 'The workflow service is unavailable; try again shortly', { field: null, reason: 'temporarily unavailable' }, { 'Retry-After': '5' });
  }
  if (isDatabaseUnavailable(error)) {
    return new ApiError('SERVICE_UNAVAILABLE', 'The database is unavailable; try again shortly', { field: null, reason: 'temporarily unavailable' }, { 'Retry-After': '5' });
  }
  return new ApiError('INTERNAL_ERROR', `An unexpected error occurred (request id ${requestId})`, { field: null, reason: 'internal error' });
}

export function errorHandler(): Middleware<AppState> {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new ApiError('NOT_FOUND', `No route for ${ctx.method} ${ctx.path}`, { field: 'path', reason: 'no such route' });
      }
      // The routers answer a known path with another method (405) or an unknown method (501) with an Allow header only.
      if ((ctx.status === 405 || ctx.status === 501) && ctx.body === undefined) {
        throw new ApiError('METHOD_NOT_ALLOWED', `${ctx.method} is not supported on ${ctx.path}`, { field: 'method', reason: `not allowed; allowed: ${ctx.response.get('Allow')}` });
      }
    } catch (error) {
      const apiError = toApiError(error, ctx.method, ctx.path, ctx.state.requestId);
      if (apiError.status >= 500) ctx.state.log.error({ err: error }, 'request failed');
      ctx.status = apiError.status;
      ctx.set(apiError.headers);
      ctx.body = apiError.toBody();
    }
  };
}
