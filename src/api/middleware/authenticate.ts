import type { Middleware, ParameterizedContext } from 'koa';
import type { ApiKeyCache } from '../../domain/accounts/api-key-cache';
import { grants } from '../../domain/accounts/scopes';
import { ApiError } from '../../errors';
import type { AppState } from '../context';

export const invalidKey = () => new ApiError('UNAUTHORIZED', 'Invalid or revoked API key', { field: 'X-API-Key', reason: 'invalid or revoked' });

/** X-API-Key → the key's company, id and scopes in ctx.state.principal; 401 when missing, unknown or revoked. */
export function authenticate(apiKeys: ApiKeyCache): Middleware<AppState> {
  return async (ctx, next) => {
    const presented = ctx.get('X-API-Key');
    if (!presented) {
      throw new ApiError('UNAUTHORIZED', 'Missing API key: send it in the X-API-Key header', { field: 'X-API-Key', reason: 'missing' });
    }
    const found = await apiKeys.authenticate(ctx.state.em, presented);
    if (!found) throw invalidKey();
    ctx.state.principal = found.principal;
    ctx.state.keyConfirmed = !found.fromMemory;
    await next();
  };
}

/** 401 unless the database confirms the key is still active; for work that writes before the request is admitted. */
export async function confirmKey(ctx: ParameterizedContext<AppState>): Promise<void> {
  if (ctx.state.keyConfirmed) return;
  const [row] = await ctx.state.em.execute('select 1 from api_keys where id = ? and revoked_at is null', [ctx.state.principal.apiKeyId]);
  if (!row) throw invalidKey();
  ctx.state.keyConfirmed = true;
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
