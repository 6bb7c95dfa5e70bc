import type { ApiKey } from '../../domain/accounts/api-key.entity';
import { ADMIN_SCOPE, INBOUND_SCOPE, REST_COLLECTIONS, TIMESHEETS_APPROVE_SCOPE, TIMESHEETS_PROCESS_SCOPE, WEBHOOKS_MANAGE_SCOPE } from '../../domain/accounts/scopes';
import { html } from '../html';
import type { Session } from '../users/sessions';
import { badge, errorSummary, field, postForm, secretValue, table, time } from './components';
import { layout } from './layout';

const checkbox = (scope: string, label: string, checked: boolean, hint?: string) =>
  html`<div class="check"><input type="checkbox" id="scope-${scope}" name="scopes" value="${scope}"${checked ? html` checked` : ''}${
    hint ? html` aria-describedby="scope-${scope}-hint"` : ''
  }><label for="scope-${scope}">${label}</label>${hint ? html` <span class="hint" id="scope-${scope}-hint">${hint}</span>` : ''}</div>`;

const SPECIAL_SCOPES: [string, string][] = [
  [INBOUND_SCOPE, 'send signed inbound webhook requests'],
  [WEBHOOKS_MANAGE_SCOPE, 'manage webhook endpoints and read delivery logs over REST'],
  [TIMESHEETS_APPROVE_SCOPE, 'lock and unlock timesheets (a manager)'],
  [TIMESHEETS_PROCESS_SCOPE, 'process timesheets and run payroll'],
  [ADMIN_SCOPE, 'everything, including every scope above'],
];

export function apiKeysPage(session: Session, keys: ApiKey[]): string {
  const admin = session.user.role === 'admin';
  const rows = keys.map(
    (k) => html`<tr>
      <td>${k.name}</td>
      <td><code>${k.prefix}</code></td>
      <td class="scopes">${k.scopes.join(', ')}</td>
      <td>${time(k.createdAt)}</td>
      <td>${time(k.lastUsedAt)}</td>
      <td>${k.revokedAt ? html`${badge('revoked')} ${time(k.revokedAt)}` : badge('active')}</td>
      ${admin ? html`<td>${k.revokedAt ? '' : html`<a href="/console/api-keys/${k.id}/revoke">Revoke<span class="visually-hidden"> ${k.name}</span></a>`}</td>` : ''}
    </tr>`,
  );
  return layout({
    title: 'API keys',
    nav: 'api-keys',
    session,
    body: html`
      <p>Keys authenticate REST requests (<code>X-API-Key</code>) and signed inbound webhook requests. A key and its signing secret are shown once, when created.</p>
      ${admin ? html`<p><a class="button" href="/console/api-keys/new">Create an API key</a></p>` : ''}
      ${table('API keys of your company', ['Name', 'Prefix', 'Scopes', 'Created', 'Last used', 'Status', ...(admin ? ['Actions'] : [])], rows, 'No API keys yet.')}`,
  });
}

export interface NewKeyForm {
  name: string;
  scopes: string[];
  error?: string | null;
  errors?: Record<string, string>;
}

export function newApiKeyPage(session: Session, form: NewKeyForm): string {
  const chosen = new Set(form.scopes);
  const collections = REST_COLLECTIONS.map(
    (c) => html`<tr><th scope="row">${c}</th>
      <td><input type="checkbox" id="scope-${c}:read" name="scopes" value="${c}:read" aria-label="${c}: read"${chosen.has(`${c}:read`) ? html` checked` : ''}></td>
      <td><input type="checkbox" id="scope-${c}:write" name="scopes" value="${c}:write" aria-label="${c}: write"${chosen.has(`${c}:write`) ? html` checked` : ''}></td></tr>`,
  );
  const scopesError = form.errors?.scopes;
  return layout({
    title: 'Create an API key',
    nav: 'api-keys',
    session,
    body: postForm(
      session,
      '/console/api-keys',
      html`${errorSummary(form.error)}
      ${field({ name: 'name', label: 'Name', value: form.name, required: true, hint: 'What the key is for, e.g. "ERP sync".', error: form.errors?.name, attributes: html`maxlength="100"` })}
      <fieldset class="scopes${scopesError ? ' field-error' : ''}"${scopesError ? html` aria-describedby="scopes-error"` : ''}>
        <legend>Scopes</legend>
        ${scopesError ? html`<p class="error" id="scopes-error">${scopesError}</p>` : ''}
        ${SPECIAL_SCOPES.map(([scope, hint]) => checkbox(scope, scope, chosen.has(scope), hint))}
        <table class="scope-grid">
          <caption>Records, per REST collection</caption>
          <thead><tr><th scope="col">Collection</th><th scope="col">read</th><th scope="col">write</th></tr></thead>
          <tbody>${collections}</tbody>
        </table>
      </fieldset>
      <div class="actions"><button type="submit" class="button">Create key</button> <a href="/console/api-keys">Cancel</a></div>`,
      html`class="wide"`,
    ),
  });
}

export function createdApiKeyPage(session: Session, issued: { apiKey: ApiKey; key: string; signingSecret: string }): string {
  return layout({
    title: 'API key created',
    nav: 'api-keys',
    session,
    body: html`
      <div class="notice" role="status"><p><strong>Copy the key and its signing secret now.</strong> They are shown only this once; only a hash of the key and a sealed copy of the secret are kept.</p></div>
      <dl class="summary">
        <dt>Name</dt><dd>${issued.apiKey.name}</dd>
        <dt>Prefix</dt><dd><code>${issued.apiKey.prefix}</code></dd>
        <dt>Scopes</dt><dd>${issued.apiKey.scopes.join(', ')}</dd>
      </dl>
      ${secretValue('issued-key', 'API key', issued.key)}
      ${secretValue('issued-signing-secret', 'Inbound signing secret', issued.signingSecret)}
      <p><a href="/console/api-keys">Back to API keys</a></p>`,
  });
}

export function revokeApiKeyPage(session: Session, key: ApiKey): string {
  return layout({
    title: `Revoke the API key “${key.name}”?`,
    nav: 'api-keys',
    session,
    body: html`
      <p>Requests with <code>${key.prefix}_…</code> will be refused (401) from the moment you confirm. This cannot be undone.</p>
      ${postForm(session, `/console/api-keys/${key.id}/revoke`, html`<div class="actions"><button type="submit" class="button danger">Revoke key</button> <a href="/console/api-keys">Cancel</a></div>`)}`,
  });
}
