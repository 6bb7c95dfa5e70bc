import type { ApiKey } from '../../domain/accounts/api-key.entity';
import type { Row } from '../../domain/page';
import type { DeliveryAttempt } from '../../delivery/delivery-attempt.entity';
import type { WebhookDelivery } from '../../delivery/webhook-delivery.entity';
import { authenticationJson } from '../../delivery/endpoints/endpoint-authentication';
import type { FeedState } from '../../delivery/feeds/feed-service';
import { isSubscribed } from '../../delivery/endpoints/subscriptions';
import { endpointName, type WebhookEndpoint } from '../../delivery/endpoints/webhook-endpoint.entity';
import { EVENT_REGISTRY, type EventDefinition, OPERATIONAL_EVENT_TYPES } from '../../events/registry';
import { html, type SafeHtml } from '../html';
import type { Session } from '../users/sessions';
import { badge, errorSummary, field, postForm, secretValue, table, time } from './components';
import { attemptsTable, DELIVERY_HEADINGS, type DeliveryView, deliveryRows } from './deliveries-parts';
import { type TransformationForm, transformationFieldset, transformationSummary, transformationTestSection, type TransformationTestView } from './endpoint-transformation';
import { layout } from './layout';

type EndpointView = Pick<
  Row<WebhookEndpoint>,
  | 'id'
  | 'delivery'
  | 'url'
  | 'description'
  | 'eventTypes'
  | 'payloadShape'
  | 'ordering'
  | 'status'
  | 'createdAt'
  | 'circuitState'
  | 'circuitFailingDeliveries'
  | 'circuitOpenedAt'
  | 'circuitProbeAt'
  | 'authHeaders'
  | 'oauth'
  | 'clientCertificate'
  | 'clientKeySealed'
  | 'filter'
  | 'transformation'
> & { apiKey: string | null | { id: string } };

const keyIdOf = (ref: EndpointView['apiKey']) => (ref === null ? null : typeof ref === 'string' ? ref : ref.id);

/** The catalogue of 6.1 and 6.2 and the operational events, by category, in registry order. */
const CATEGORIES: [string, EventDefinition[]][] = [...new Set(EVENT_REGISTRY.map((e) => e.category))].map((category) => [
  category,
  EVENT_REGISTRY.filter((e) => e.category === category),
]);

/** The categories of the operational events (endpoint.*, delivery.*): about the account's own endpoints. */
const OPERATIONAL_CATEGORIES = new Set<string>(OPERATIONAL_EVENT_TYPES.map((name) => name.slice(0, name.indexOf('.'))));

const categoryLabel = (category: string) => (category === 'work_order' ? 'work_order.* / workorder.*' : `${category}.*`);
const categoryLegend = (category: string) => (OPERATIONAL_CATEGORIES.has(category) ? `${categoryLabel(category)} (operational)` : categoryLabel(category));
const eventLabel = (e: EventDefinition) => (e.shapeA && e.shapeB && e.shapeA !== e.shapeB ? `${e.shapeA} / ${e.shapeB}` : e.key);

export function endpointsPage(session: Session, endpoints: EndpointView[], keys: ApiKey[]): string {
  const admin = session.user.role === 'admin';
  const keyNames = new Map(keys.map((k) => [k.id, k.name]));
  const rows = endpoints.map(
    (e) => html`<tr>
      <td class="excerpt"><a href="/console/endpoints/${e.id}">${endpointName(e)}</a></td>
      <td>${e.description ?? ''}</td>
      <td class="scopes">${e.eventTypes.join(', ')}</td>
      <td>${e.payloadShape}</td>
      <td>${badge(e.status)}</td>
      <td>${keyNames.get(keyIdOf(e.apiKey) ?? '') ?? html`<span class="muted">none</span>`}</td>
      <td>${time(e.createdAt)}</td>
    </tr>`,
  );
  return layout({
    title: 'Webhook endpoints',
    nav: 'endpoints',
    session,
    body: html`
      <p>Each endpoint is sent the events it subscribes to, signed with its own secret (<code>X-Webhook-Signature</code>); a feed keeps them for its subscriber to read.</p>
      ${admin ? html`<p><a class="button" href="/console/endpoints/new">Register an endpoint</a></p>` : ''}
      ${table('Webhook endpoints of your company', ['URL', 'Description', 'Events', 'Shape', 'Status', 'Not sent changes of key', 'Registered'], rows, 'No endpoints yet.')}`,
  });
}

/** A custom header's row of the form; a secret one's value is never put back into the page. */
export interface HeaderRow {
  name: string;
  value: string;
  secret: boolean;
  /** A secret header saved before: left blank, its value is kept. */
  saved: boolean;
}

export interface EndpointForm {
  /** webhook or feed; chosen at registration only. */
  delivery: string;
  url: string;
  description: string;
  eventTypes: string[];
  payloadShape: string;
  ordering: string;
  apiKeyId: string;
  headers: HeaderRow[];
  oauth: { tokenUrl: string; clientId: string; clientSecret: string; scope: string; audience: string };
  /** A client secret is saved: left blank, it is kept. */
  clientSecretSaved: boolean;
  certificate: string;
  privateKey: string;
  /** A private key is saved: left blank, it is kept. */
  privateKeySaved: boolean;
  /** The content filter as JSON text; empty for none. */
  filter: string;
  transformation: TransformationForm;
  error?: string | null;
  /** Problems by field: the REST body's top-level name, and its full path (authentication.headers[0].name). */
  errors?: Record<string, string>;
}

/** Blank rows offered for new headers, within the REST limit of 30. */
const NEW_HEADER_ROWS = 2;
const MAX_HEADERS = 30;

function textArea(o: { name: string; label: string; value: string; hint: string; error?: string; maxLength: number }): SafeHtml {
  const id = `field-${o.name}`;
  return html`<div class="field${o.error ? ' field-error' : ''}">
    <label for="${id}">${o.label}</label>
    <p class="hint" id="${id}-hint">${o.hint}</p>
    ${o.error ? html`<p class="error" id="${id}-error">${o.error}</p>` : ''}
    <textarea id="${id}" name="${o.name}" rows="4" spellcheck="false" maxlength="${o.maxLength}" aria-describedby="${id}-hint${o.error ? ` ${id}-error` : ''}">${o.value}</textarea>
  </div>`;
}

/** Headers, OAuth 2.0 and client certificate: what an API gateway in front of the endpoint wants besides the signature. */
function authenticationFieldsets(form: EndpointForm, errors: Record<string, string>): SafeHtml {
  const rows = [...form.headers, ...Array.from({ length: NEW_HEADER_ROWS }, (): HeaderRow => ({ name: '', value: '', secret: false, saved: false }))].slice(0, MAX_HEADERS);
  const headerRow = (row: HeaderRow, index: number) => {
    const error = errors[`authentication.headers[${index}].name`] ?? errors[`authentication.headers[${index}].value`];
    return html`<div class="header-row${error ? ' field-error' : ''}">
      ${error ? html`<p class="error">${error}</p>` : ''}
      <label for="header-name-${index}">Header ${index + 1} name</label>
      <input id="header-name-${index}" name="header_name_${index}" type="text" value="${row.name}" maxlength="100" spellcheck="false">
      <label for="header-value-${index}">Header ${index + 1} value</label>
      <input id="header-value-${index}" name="header_value_${index}" type="${row.secret ? 'password' : 'text'}" value="${row.secret ? '' : row.value}" maxlength="4096" spellcheck="false" autocomplete="off"${
        row.saved ? html` placeholder="saved: leave blank to keep"` : ''
      }>
      <div class="check"><input type="checkbox" id="header-secret-${index}" name="header_secret_${index}" value="on"${row.secret ? html` checked` : ''}><label for="header-secret-${index}">Secret (shown only as a hint)</label></div>
      ${row.saved ? html`<input type="hidden" name="header_saved_${index}" value="on">` : ''}
    </div>`;
  };
  const { oauth } = form;
  return html`<fieldset>
      <legend>Custom headers (optional)</legend>
      <p class="hint">Sent with every delivery, e.g. an API gateway's key. Not X-Webhook-*, Content-Type, Host or hop-by-hop headers. A row left empty is removed.</p>
      ${rows.map(headerRow)}
    </fieldset>
    <fieldset>
      <legend>OAuth 2.0 client credentials (optional)</legend>
      <p class="hint">A bearer token is fetched from the token endpoint (an https address) before deliveries and reused until shortly before it expires. Leave it empty for none.</p>
      ${field({ name: 'oauth_token_url', label: 'Token endpoint', type: 'url', value: oauth.tokenUrl, error: errors['authentication.oauth.token_url'], attributes: html`maxlength="2000"` })}
      ${field({ name: 'oauth_client_id', label: 'Client ID', value: oauth.clientId, error: errors['authentication.oauth.client_id'], attributes: html`maxlength="500"` })}
      ${field({
        name: 'oauth_client_secret',
        label: 'Client secret',
        type: 'password',
        value: '',
        autocomplete: 'off',
        hint: form.clientSecretSaved ? 'Saved: leave blank to keep it.' : 'Encrypted when saved, never shown again.',
        error: errors['authentication.oauth.client_secret'],
        attributes: html`maxlength="2000"`,
      })}
      ${form.clientSecretSaved ? html`<input type="hidden" name="oauth_client_secret_saved" value="on">` : ''}
      ${field({ name: 'oauth_scope', label: 'Scope (optional)', value: oauth.scope, error: errors['authentication.oauth.scope'], attributes: html`maxlength="1000"` })}
      ${field({ name: 'oauth_audience', label: 'Audience (optional)', value: oauth.audience, error: errors['authentication.oauth.audience'], attributes: html`maxlength="2000"` })}
    </fieldset>
    <fieldset>
      <legend>Client certificate for mutual TLS (optional)</legend>
      ${textArea({
        name: 'client_certificate',
        label: 'Certificate (PEM)',
        value: form.certificate,
        hint: 'The certificate deliveries present, intermediate certificates after it. Leave empty for none.',
        error: errors['authentication.client_certificate.certificate'],
        maxLength: 32768,
      })}
      ${textArea({
        name: 'client_private_key',
        label: 'Private key (PEM)',
        value: '',
        hint: form.privateKeySaved ? 'Saved: leave empty to keep it (it must match the certificate).' : 'Unencrypted; encrypted when saved, never shown again.',
        error: errors['authentication.client_certificate.private_key'],
        maxLength: 16384,
      })}
      ${form.privateKeySaved ? html`<input type="hidden" name="client_private_key_saved" value="on">` : ''}
    </fieldset>`;
}

function eventsFieldset(chosen: Set<string>, error: string | undefined): SafeHtml {
  const check = (value: string, label: string, extra = '') =>
    html`<div class="check${extra}"><input type="checkbox" id="event-${value}" name="event_types" value="${value}"${chosen.has(value) ? html` checked` : ''}><label for="event-${value}">${label}</label></div>`;
  return html`<fieldset class="events${error ? ' field-error' : ''}"${error ? html` aria-describedby="event_types-error"` : ''}>
    <legend>Events</legend>
    <p class="hint">Choose whole categories or single events (names of webhooks.md 6.1 and 6.2; a shape B name is the same event). The operational ones tell about your endpoints and deliveries: an endpoint disabled, its circuit breaker opened or closed, a delivery failed or recovered; never about the endpoint they are sent to.</p>
    ${error ? html`<p class="error" id="event_types-error">${error}</p>` : ''}
    ${check('*', 'All events (*)')}
    <div class="events-grid">${CATEGORIES.map(
      ([category, events]) => html`<fieldset><legend>${categoryLegend(category)}</legend>
        ${check(`${category}.*`, `All ${categoryLabel(category)} events`, ' category')}
        ${events.map((e) => check(e.key, eventLabel(e)))}
      </fieldset>`,
    )}</div>
  </fieldset>`;
}

/** The form's action, title and button; `chooseDelivery` on registration, where webhook or feed is chosen. */
export interface EndpointFormMode {
  action: string;
  title: string;
  submit: string;
  chooseDelivery?: boolean;
}

export function endpointFormPage(session: Session, mode: EndpointFormMode, form: EndpointForm, keys: ApiKey[]): string {
  const errors = form.errors ?? {};
  const shape = form.payloadShape || 'A';
  const radio = (value: string, label: string) =>
    html`<div class="check"><input type="radio" id="shape-${value}" name="payload_shape" value="${value}"${shape === value ? html` checked` : ''}><label for="shape-${value}">${label}</label></div>`;
  const ordering = form.ordering || 'none';
  const orderingRadio = (value: string, label: string) =>
    html`<div class="check"><input type="radio" id="ordering-${value}" name="ordering" value="${value}"${ordering === value ? html` checked` : ''}><label for="ordering-${value}">${label}</label></div>`;
  return layout({
    title: mode.title,
    nav: 'endpoints',
    session,
    body: postForm(
      session,
      mode.action,
      html`${errorSummary(form.error)}
      ${mode.chooseDelivery ? deliveryFieldset(form.delivery, errors.delivery) : ''}
      ${form.delivery === 'feed' && !mode.chooseDelivery
        ? ''
        : field({ name: 'url', label: 'URL', type: 'url', value: form.url, hint: 'A webhook\'s public https:// address that answers POST requests with 2xx; none for a feed.', error: errors.url, attributes: html`maxlength="2000"` })}
      ${field({ name: 'description', label: 'Description (optional)', value: form.description, error: errors.description, attributes: html`maxlength="500"` })}
      <fieldset${errors.payload_shape ? html` class="field-error"` : ''}>
        <legend>Payload shape</legend>
        ${errors.payload_shape ? html`<p class="error">${errors.payload_shape}</p>` : ''}
        ${radio('A', 'A: detailed (event_id, event_type, timestamp, company_id, data)')}
        ${radio('B', 'B: catalog (event, timestamp, data; work orders as workorder.*)')}
      </fieldset>
      ${form.delivery === 'feed' && !mode.chooseDelivery
        ? ''
        : html`<fieldset${errors.ordering ? html` class="field-error"` : ''}>
        <legend>Ordering (webhooks)</legend>
        ${errors.ordering ? html`<p class="error">${errors.ordering}</p>` : ''}
        ${orderingRadio('none', 'None: each delivery goes on its own, retries may overtake')}
        ${orderingRadio('per_record', "Per record: one record's changes arrive one at a time, in the order they happened; other records are not held back")}
      </fieldset>`}
      <div class="field${errors.api_key_id ? ' field-error' : ''}">
        <label for="field-api_key_id">Do not send changes made with this API key</label>
        <p class="hint" id="field-api_key_id-hint">Echo prevention: the system that owns this endpoint is not sent back its own changes.</p>
        ${errors.api_key_id ? html`<p class="error">${errors.api_key_id}</p>` : ''}
        <select id="field-api_key_id" name="api_key_id" aria-describedby="field-api_key_id-hint">
          <option value="">No key: send every change</option>
          ${keys.filter((k) => !k.revokedAt).map((k) => html`<option value="${k.id}"${form.apiKeyId === k.id ? html` selected` : ''}>${k.name} (${k.prefix})</option>`)}
        </select>
      </div>
      ${eventsFieldset(new Set(form.eventTypes), errors.event_types)}
      ${textArea({
        name: 'filter',
        label: 'Filter (optional)',
        value: form.filter,
        hint: 'Only events whose body matches are sent, as JSON: {"path": "data.status", "eq": "in_progress"}, with the operators eq, ne, in, nin, gt, gte, lt, lte, exists, combined with {"and": [...]}, {"or": [...]}, {"not": {...}}. Leave it empty for every event chosen above.',
        error: errors.filter,
        maxLength: 20000,
      })}
      ${transformationFieldset(form.transformation, errors, form.delivery !== 'feed' || mode.chooseDelivery === true)}
      ${form.delivery === 'feed' && !mode.chooseDelivery ? '' : authenticationFieldsets(form, errors)}
      <div class="actions"><button type="submit" class="button">${mode.submit}</button> <a href="/console/endpoints">Cancel</a></div>`,
      html`class="wide"`,
    ),
  });
}

/** Webhook (sent to its URL) or feed (read by its subscriber): chosen when the endpoint is registered. */
function deliveryFieldset(delivery: string, error: string | undefined): SafeHtml {
  const radio = (value: string, label: string) =>
    html`<div class="check"><input type="radio" id="delivery-${value}" name="delivery" value="${value}"${delivery === value ? html` checked` : ''}><label for="delivery-${value}">${label}</label></div>`;
  return html`<fieldset${error ? html` class="field-error"` : ''}>
    <legend>Delivery</legend>
    ${error ? html`<p class="error">${error}</p>` : ''}
    ${radio('webhook', 'Webhook: signed POSTs to the address below')}
    ${radio('feed', 'Feed: kept for its subscriber to read with an API key of your company (for systems behind a firewall that lets no request in)')}
  </fieldset>`;
}

/** The page showing a secret just issued (registration or rotation). */
export function endpointSecretPage(session: Session, endpoint: EndpointView, secret: string, title: string): string {
  return layout({
    title,
    nav: 'endpoints',
    session,
    body: html`
      <div class="notice" role="status"><p><strong>Copy the signing secret now.</strong> It is shown only this once. Deliveries to <code>${endpoint.url}</code> are signed with it from now on.</p></div>
      ${secretValue('endpoint-secret', 'Signing secret', secret)}
      <p><a href="/console/endpoints/${endpoint.id}">Go to the endpoint</a></p>`,
  });
}

export interface TestResult {
  delivery: Pick<WebhookDelivery, 'id' | 'status'>;
  attempts: DeliveryAttempt[];
}

function testResultSection(result: TestResult | null): SafeHtml {
  const content = result
    ? html`<div class="result">
        <p>Test delivery <a href="/console/deliveries/${result.delivery.id}"><code>${result.delivery.id}</code></a>: ${badge(result.delivery.status)}${
          result.delivery.status === 'pending' ? ' (still being attempted: reload the page to see how it ends)' : ''
        }</p>
        ${attemptsTable(result.attempts)}
      </div>`
    : html`<p class="muted">No test delivery sent from this page yet.</p>`;
  return html`<section id="test-result" tabindex="-1" aria-live="polite" aria-labelledby="test-heading"><h3 id="test-heading" class="visually-hidden">Test delivery result</h3>${content}</section>`;
}

export interface EndpointPageData {
  endpoint: EndpointView;
  keyName: string | null;
  recent: DeliveryView[];
  testResult: TestResult | null;
  /** The bulk re-run form's default: 24 hours ago, as datetime-local in UTC. */
  resendSince: string;
  /** Deliveries waiting for the endpoint (its breaker is open, or it has as many attempts in flight as it may). */
  held: number;
  /** What testing the filter on the company's latest event of a type said, when the page was asked to. */
  filterTest: FilterTestResult | null;
  /** What trying the transformation on the company's latest event of a type made, when the page was asked to. */
  transformationTest: TransformationTestView | null;
  /** A feed's position and lag; null for a webhook endpoint. */
  feed: FeedState | null;
}

/** The filter tried on the company's latest event of a type: whether it would be sent, or why it could not be tried. */
export type FilterTestResult = { eventType: string; matches: boolean } | { eventType: string; problem: string };

function filterTestSection(endpoint: EndpointView, result: FilterTestResult | null): SafeHtml {
  const names = EVENT_REGISTRY.filter((e) => isSubscribed(endpoint.eventTypes, e.key)).map((e) => e.shapeA ?? e.shapeB!);
  const outcome = !result
    ? ''
    : 'problem' in result
      ? html`<p class="error">${result.problem}</p>`
      : html`<p>The latest <code>${result.eventType}</code> event ${result.matches ? html`<strong>would be sent</strong>: it matches the filter.` : html`<strong>would not be sent</strong>: the filter leaves it out.`}</p>`;
  return html`<h2>Test the filter</h2>
    <p>Whether the filter lets through your company's most recent event of a type, as this endpoint would be sent it.</p>
    <form method="get" action="/console/endpoints/${endpoint.id}#filter-test" class="filters" aria-label="Test the filter">
      <div class="actions">
        <div class="field"><label for="filter-test-type">Event type</label><select id="filter-test-type" name="filter_test">${names.map(
          (name) => html`<option value="${name}"${result?.eventType === name ? html` selected` : ''}>${name}</option>`,
        )}</select></div>
        <button type="submit" class="button secondary">Test the filter</button>
      </div>
    </form>
    <section id="filter-test" tabindex="-1" aria-live="polite" aria-label="Filter test result">${outcome}</section>`;
}

/** The endpoint's filter as saved, or that it has none. */
function filterSummary(endpoint: EndpointView): SafeHtml {
  return endpoint.filter ? html`<pre class="filter"><code>${JSON.stringify(endpoint.filter, null, 2)}</code></pre>` : html`<span class="muted">none: every event chosen</span>`;
}

/** Where a feed stands: its last event, what its subscriber acknowledged, and how far behind that is. */
function feedSummary(endpoint: EndpointView, feed: FeedState): SafeHtml {
  const behind = feed.unacknowledgedEvents === 0 ? 'none' : `${feed.unacknowledgedEvents} ${feed.unacknowledgedEvents === 1 ? 'event' : 'events'}`;
  return html`
    <dt>Read with</dt><dd><code>GET /api/v1/webhook-endpoints/${endpoint.id}/feed</code></dd>
    <dt>Position</dt><dd>${feed.position} ${feed.position === 1 ? 'event' : 'events'} written</dd>
    <dt>Acknowledged</dt><dd>${feed.acknowledged === 0 ? html`<span class="muted">nothing yet</span>` : `up to event ${feed.acknowledged}`}</dd>
    <dt>Not yet acknowledged</dt><dd>${behind}${feed.oldestUnacknowledgedAt ? html`, the oldest written ${time(feed.oldestUnacknowledgedAt)}` : ''}</dd>`;
}

function circuitSummary(session: Session, endpoint: EndpointView, held: number, base: string): SafeHtml {
  const waiting = held > 0 ? html` · ${held} ${held === 1 ? 'delivery waits' : 'deliveries wait'} for the endpoint` : '';
  if (endpoint.circuitState === 'closed') {
    const failing = endpoint.circuitFailingDeliveries.length;
    const failures = failing > 0 ? html` · the last attempts of ${failing} ${failing === 1 ? 'delivery' : 'deliveries'} failed` : '';
    return html`${badge('closed')}${failures}${waiting}`;
  }
  const state =
    endpoint.circuitState === 'open'
      ? html`open since ${time(endpoint.circuitOpenedAt)}: attempts wait, without using up their retries; one probe attempt at ${time(endpoint.circuitProbeAt)}`
      : html`a probe attempt is under way`;
  const close =
    session.user.role === 'admin'
      ? postForm(session, `${base}/close-circuit`, html`<button type="submit" class="button secondary">Close the circuit</button>`, html`class="inline"`)
      : '';
  return html`${badge(endpoint.circuitState)} ${state}${waiting} ${close}`;
}

/** The endpoint's authentication as the page shows it: names and settings, a secret's hint at most. */
function authenticationSummary(endpoint: EndpointView): SafeHtml {
  const { headers, oauth, client_certificate: certificate } = authenticationJson(endpoint);
  const secret = (hint: string | null) => html`<span class="muted">secret${hint ? html`, ends in <code>${hint}</code>` : ''}</span>`;
  const none = html`<span class="muted">none</span>`;
  return html`<dt>Headers</dt><dd>${
    headers.length > 0 ? html`<ul class="plain">${headers.map((h) => html`<li><code>${h.name}</code>: ${h.secret ? secret(h.value_hint) : html`<code>${h.value}</code>`}</li>`)}</ul>` : none
  }</dd>
    <dt>OAuth 2.0</dt><dd>${
      oauth
        ? html`client <code>${oauth.client_id}</code> (${secret(oauth.client_secret_hint)}) at <code>${oauth.token_url}</code>${oauth.scope ? html`, scope <code>${oauth.scope}</code>` : ''}${
            oauth.audience ? html`, audience <code>${oauth.audience}</code>` : ''
          }`
        : none
    }</dd>
    <dt>Client certificate</dt><dd>${
      certificate
        ? html`${certificate.subject}, issued by ${certificate.issuer}, valid until ${time(new Date(certificate.not_after))}<br><span class="muted">SHA-256 ${certificate.fingerprint_sha256}</span>`
        : none
    }</dd>`;
}

export function endpointPage(session: Session, data: EndpointPageData): string {
  const { endpoint, feed } = data;
  const admin = session.user.role === 'admin';
  const base = `/console/endpoints/${endpoint.id}`;
  if (feed) return feedPage(session, data, feed, admin, base);
  const adminActions = html`
    <h2>Manage</h2>
    <div class="actions">
      <a class="button secondary" href="${base}/edit">Edit</a>
      ${postForm(session, `${base}/status`, html`<input type="hidden" name="status" value="${endpoint.status === 'active' ? 'disabled' : 'active'}"><button type="submit" class="button secondary">${endpoint.status === 'active' ? 'Disable' : 'Enable'}</button>`, html`class="inline"`)}
      <a class="button secondary" href="${base}/rotate-secret">Rotate secret</a>
      <a class="button danger" href="${base}/delete">Delete</a>
    </div>
    <h2>Test delivery</h2>
    <p>Sends a <code>webhook.test</code> delivery now: one attempt, recorded in the log.</p>
    ${postForm(session, `${base}/test`, html`<button type="submit" class="button">Send a test delivery</button>`, html`data-update="test-result"`)}
    ${testResultSection(data.testResult)}
    <h2>Resend failed deliveries</h2>
    ${postForm(
      session,
      `${base}/resend-failed`,
      html`${field({ name: 'since', label: 'Made since (UTC)', type: 'datetime-local', value: data.resendSince, required: true, hint: 'Every failed or cancelled delivery to this endpoint made since then is sent again, each with its X-Webhook-ID, in the background.' })}
      <button type="submit" class="button secondary">Resend failed deliveries</button>`,
    )}`;
  return layout({
    title: 'Webhook endpoint',
    nav: 'endpoints',
    session,
    body: html`
      <dl class="summary">
        <dt>Delivery</dt><dd>webhook</dd>
        <dt>URL</dt><dd><code>${endpoint.url}</code></dd>
        <dt>Description</dt><dd>${endpoint.description ?? html`<span class="muted">none</span>`}</dd>
        <dt>Status</dt><dd>${badge(endpoint.status)}</dd>
        <dt>Circuit breaker</dt><dd>${circuitSummary(session, endpoint, data.held, base)}</dd>
        <dt>Payload shape</dt><dd>${endpoint.payloadShape}</dd>
        <dt>Ordering</dt><dd>${endpoint.ordering === 'per_record' ? "per record: one record's deliveries at a time, in commit order" : 'none'}</dd>
        <dt>Events</dt><dd class="scopes">${endpoint.eventTypes.join(', ')}</dd>
        <dt>Filter</dt><dd>${filterSummary(endpoint)}</dd>
        <dt>Transformation</dt><dd>${transformationSummary(endpoint.transformation)}</dd>
        <dt>Not sent changes of key</dt><dd>${data.keyName ?? html`<span class="muted">none</span>`}</dd>
        ${authenticationSummary(endpoint)}
        <dt>Registered</dt><dd>${time(endpoint.createdAt)}</dd>
      </dl>
      ${endpoint.filter ? filterTestSection(endpoint, data.filterTest) : ''}
      ${endpoint.transformation ? transformationTestSection(endpoint, data.transformationTest) : ''}
      ${admin ? adminActions : ''}
      <h2>Recent deliveries</h2>
      ${table('Recent deliveries to this endpoint', DELIVERY_HEADINGS, deliveryRows(data.recent, new Map([[endpoint.id, endpointName(endpoint)]]), () => endpoint.id), 'Nothing delivered yet.')}
      <p><a href="/console/deliveries?endpoint_id=${endpoint.id}">All deliveries to this endpoint</a></p>`,
  });
}

/** A feed's page: its settings, position and lag; no URL, breaker, test or resend (it is read, not sent to). */
function feedPage(session: Session, data: EndpointPageData, feed: FeedState, admin: boolean, base: string): string {
  const { endpoint } = data;
  return layout({
    title: 'Event feed',
    nav: 'endpoints',
    session,
    body: html`
      <dl class="summary">
        <dt>Delivery</dt><dd>feed</dd>
        ${feedSummary(endpoint, feed)}
        <dt>Description</dt><dd>${endpoint.description ?? html`<span class="muted">none</span>`}</dd>
        <dt>Status</dt><dd>${badge(endpoint.status)}</dd>
        <dt>Payload shape</dt><dd>${endpoint.payloadShape}</dd>
        <dt>Events</dt><dd class="scopes">${endpoint.eventTypes.join(', ')}</dd>
        <dt>Filter</dt><dd>${filterSummary(endpoint)}</dd>
        <dt>Transformation</dt><dd>${transformationSummary(endpoint.transformation)}</dd>
        <dt>Not sent changes of key</dt><dd>${data.keyName ?? html`<span class="muted">none</span>`}</dd>
        <dt>Registered</dt><dd>${time(endpoint.createdAt)}</dd>
      </dl>
      ${endpoint.transformation ? transformationTestSection(endpoint, data.transformationTest) : ''}
      ${
        admin
          ? html`<h2>Manage</h2>
      <div class="actions">
        <a class="button secondary" href="${base}/edit">Edit</a>
        ${postForm(session, `${base}/status`, html`<input type="hidden" name="status" value="${endpoint.status === 'active' ? 'disabled' : 'active'}"><button type="submit" class="button secondary">${endpoint.status === 'active' ? 'Disable' : 'Enable'}</button>`, html`class="inline"`)}
        <a class="button danger" href="${base}/delete">Delete</a>
      </div>`
          : ''
      }`,
  });
}

/** Confirmation of an action that cannot be taken back (rotation, deletion). */
export function confirmEndpointPage(session: Session, endpoint: EndpointView, o: { title: string; explanation: string; action: string; button: string }): string {
  return layout({
    title: o.title,
    nav: 'endpoints',
    session,
    body: html`
      <p><code>${endpoint.url}</code></p>
      <p>${o.explanation}</p>
      ${postForm(session, o.action, html`<div class="actions"><button type="submit" class="button danger">${o.button}</button> <a href="/console/endpoints/${endpoint.id}">Cancel</a></div>`)}`,
  });
}
