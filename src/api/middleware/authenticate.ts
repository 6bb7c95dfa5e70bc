import type { Middleware } from 'koa';
import { authenticateApiKey } from '../../domain/accounts/api-keys-service';
import { grants } from '../../domain/accounts/scopes';
import { ApiError } from '../../errors';
import type { AppState } from '../context';

/** X-API-Key → the key's company, id and scopes in ctx.state.principal; 401 when missing, unknown or revoked. */
export function authenticate(): Middleware<AppState> {
  return async (ctx, next) => {
    const presented = ctx.get('X-API-Key');
    if (!presented) {
      throw new ApiError('UNAUTHORIZED', 'Missing API key: send it in the X-API-Key header', { field: 'X-API-Key', reason: 'missing' });
    }
    const principal = await authenticateApiKey(ctx.state.em, presented);
    if (!principal) {
      throw new ApiError('UNAUTHORIZED', 'Invalid or revoked API key', { field: 'X-API-Key', reason: 'invalid or revoked' });
    }
    ctx.state.principal = principal;
    await next();
  };
}

/** 403 unless the authenticated key holds `scope` (or admin). */
export function requireScope(scope: string): Middleware<AppState> {
  return async (ctx, next) => {
    if (!grants(ctx.state.principal.scopes, scope)) {
      throw new ApiError('FORBIDDEN', `This API key lacks the ${scope} scope`, { field: 'X-API-Key', reason: `missing scope ${scope}` });
    }
    await next();
  };
}
