import type { AppDeps } from '../../api/context';
import { getApiKey, issueApiKey, listApiKeys, revokeApiKey } from '../../domain/accounts/api-keys-service';
import { unknownScopes } from '../../domain/accounts/scopes';
import { ApiError } from '../../errors';
import type { ConsoleContext, ConsolePage } from '../context';
import { list, redirectWithFlash, sendPage, text } from '../http';
import type { Session } from '../users/sessions';
import { apiKeysPage, createdApiKeyPage, newApiKeyPage, revokeApiKeyPage } from '../views/api-keys';

async function keyOf(ctx: ConsoleContext, session: Session) {
  const key = await getApiKey(ctx.state.em, session.user.companyId, ctx.params.id!);
  if (!key) throw ApiError.notFound('API key');
  return key;
}

/** API keys (rest-api.md 5): list, create with chosen scopes (key and secret shown once), revoke after confirming. */
export function apiKeyPages({ secretBox }: AppDeps): ConsolePage[] {
  return [
    {
      method: 'GET',
      path: '/api-keys',
      role: 'viewer',
      async handler(ctx, session) {
        sendPage(ctx, apiKeysPage(session, await listApiKeys(ctx.state.em, session.user.companyId)));
      },
    },
    {
      method: 'GET',
      path: '/api-keys/new',
      role: 'admin',
      async handler(ctx, session) {
        sendPage(ctx, newApiKeyPage(session, { name: '', scopes: [] }));
      },
    },
    {
      method: 'POST',
      path: '/api-keys',
      role: 'admin',
      async handler(ctx, session) {
        const name = text(ctx.state.form, 'name').trim();
        const scopes = list(ctx.state.form, 'scopes');
        const errors: Record<string, string> = {};
        if (name.length < 1 || name.length > 100) errors.name = 'Enter a name of 1 to 100 characters.';
        if (scopes.length === 0) errors.scopes = 'Choose at least one scope.';
        else if (unknownScopes(scopes).length > 0) errors.scopes = `Unknown scopes: ${unknownScopes(scopes).join(', ')}.`;
        if (Object.keys(errors).length > 0) {
          return sendPage(ctx, newApiKeyPage(session, { name, scopes, errors, error: Object.values(errors).join(' ') }), 400);
        }
        const issued = await issueApiKey(ctx.state.em, secretBox, { companyId: session.user.companyId, name, scopes });
        ctx.state.log.info({ console: 'api key created', userId: session.user.id, apiKeyId: issued.apiKey.id }, 'console action');
        sendPage(ctx, createdApiKeyPage(session, issued));
      },
    },
    {
      method: 'GET',
      path: '/api-keys/:id/revoke',
      role: 'admin',
      async handler(ctx, session) {
        const key = await keyOf(ctx, session);
        if (key.revokedAt) return redirectWithFlash(ctx, session, '/console/api-keys', `The API key “${key.name}” is already revoked.`);
        sendPage(ctx, revokeApiKeyPage(session, key));
      },
    },
    {
      method: 'POST',
      path: '/api-keys/:id/revoke',
      role: 'admin',
      async handler(ctx, session) {
        const key = await revokeApiKey(ctx.state.em, ctx.params.id!, session.user.companyId);
        if (!key) throw ApiError.notFound('API key');
        ctx.state.log.info({ console: 'api key revoked', userId: session.user.id, apiKeyId: key.id }, 'console action');
        await redirectWithFlash(ctx, session, '/console/api-keys', `The API key “${key.name}” is revoked: requests with it are refused from now on.`);
      },
    },
  ];
}
