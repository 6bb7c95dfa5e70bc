import type { Row } from '../../domain/page';
import type { DeliveryAttempt } from '../../delivery/delivery-attempt.entity';
import { deliveryTrace, RERUNNABLE_STATUSES } from '../../delivery/deliveries-service';
import type { WebhookAlert } from '../../delivery/webhook-alert.entity';
import { type WebhookDelivery, waitingReason } from '../../delivery/webhook-delivery.entity';
import type { FeedState } from '../../delivery/feeds/feed-service';
import { endpointName, type WebhookEndpoint } from '../../delivery/endpoints/webhook-endpoint.entity';
import { traceIdOf } from '../../observability/trace-context';
import { html, type SafeHtml } from '../html';
import type { Session } from '../users/sessions';
import { badge, errorSummary, postForm, table, time } from './components';
import { attemptsTable, DELIVERY_HEADINGS, type DeliveryView, deliveryRows } from './deliveries-parts';
import { layout } from './layout';
import { DELIVERY_STATUSES, type HoldReason } from '../../../workflows/webhook-delivery.contract';

export interface LogFilters {
  endpoint_id: string;
  event_type: string;
  status: string;
  from: string;
  to: string;
}

export interface LogPage {
  filters: LogFilters;
  deliveries: (DeliveryView & { endpoint: string })[];
  endpoints: Pick<WebhookEndpoint, 'id' | 'url' | 'status'>[];
  /** The company's feeds, read by their subscribers rather than delivered: where each stands instead of a delivery row. */
  feeds: { endpoint: Pick<WebhookEndpoint, 'id' | 'url' | 'description'>; state: FeedState }[];
  total: number;
  offset: number;
  limit: number;
  error?: string | null;
}

function pagerLink(filters: LogFilters, offset: number, label: string) {
  const query = new URLSearchParams({ ...Object.fromEntries(Object.entries(filters).filter(([, v]) => v)), offset: String(offset) });
  return html`<a href="/console/deliveries?${query.toString()}">${label}</a>`;
}

export function deliveryLogPage(session: Session, page: LogPage): string {
  const f = page.filters;
  const urls = new Map(page.endpoints.map((e) => [e.id, endpointName(e)]));
  const select = (name: string, label: string, options: [string, string][]) =>
    html`<div class="field"><label for="filter-${name}">${label}</label><select id="filter-${name}" name="${name}">
      <option value="">Any</option>
      ${options.map(([value, text]) => html`<option value="${value}"${f[name as keyof LogFilters] === value ? html` selected` : ''}>${text}</option>`)}
    </select></div>`;
  const input = (name: keyof LogFilters, label: string, type: string) =>
    html`<div class="field"><label for="filter-${name}">${label}</label><input id="filter-${name}" name="${name}" type="${type}" value="${f[name]}"></div>`;
  const last = Math.min(page.offset + page.limit, page.total);
  return layout({
    title: 'Delivery log',
    nav: 'deliveries',
    session,
    body: html`
      ${errorSummary(page.error)}
      <form method="get" action="/console/deliveries" class="filters" role="search" aria-label="Filter deliveries">
        <div class="actions">
          ${select('endpoint_id', 'Endpoint', page.endpoints.map((e) => [e.id, e.status === 'deleted' ? `${endpointName(e)} (deleted)` : endpointName(e)]))}
          ${input('event_type', 'Event type', 'text')}
          ${select('status', 'Status', DELIVERY_STATUSES.map((s) => [s, s]))}
          ${input('from', 'Made from (UTC)', 'datetime-local')}
          ${input('to', 'Made before (UTC)', 'datetime-local')}
          <button type="submit" class="button secondary">Filter</button>
          <a href="/console/deliveries">Clear</a>
        </div>
      </form>
      <p>${page.total === 0 ? 'No deliveries match.' : `Deliveries ${page.offset + 1} to ${last} of ${page.total}, newest first.`}</p>
      ${table('Deliveries', DELIVERY_HEADINGS, deliveryRows(page.deliveries, urls, (d) => d.endpoint), '')}
      <nav class="pager" aria-label="Pages of the log">
        ${page.offset > 0 ? pagerLink(f, Math.max(0, page.offset - page.limit), 'Newer deliveries') : ''}
        ${last < page.total ? pagerLink(f, page.offset + page.limit, 'Older deliveries') : ''}
      </nav>
      ${page.feeds.length ? feedLagTable(page.feeds) : ''}`,
  });
}

/** The feeds' lag: what their subscribers have not acknowledged yet, and how old the oldest of it is. */
function feedLagTable(feeds: LogPage['feeds']): SafeHtml {
  const rows = feeds.map(
    ({ endpoint, state }) => html`<tr>
      <td><a href="/console/endpoints/${endpoint.id}">${endpoint.description ?? endpointName(endpoint)}</a></td>
      <td>${state.position}</td>
      <td>${state.unacknowledgedEvents}</td>
      <td>${state.oldestUnacknowledgedAt ? time(state.oldestUnacknowledgedAt) : html`<span class="muted">none</span>`}</td>
    </tr>`,
  );
  return html`<h2>Feeds</h2>
    <p>Feeds are read by their subscribers (GET …/feed), not delivered: each one's lag is what its subscriber has not acknowledged yet.</p>
    ${table('Feeds and their lag', ['Feed', 'Events written', 'Not yet acknowledged', 'Oldest not acknowledged, written'], rows, '')}`;
}

export interface DeliveryPageData {
  delivery: WebhookDelivery;
  endpoint: Pick<WebhookEndpoint, 'id' | 'url' | 'status'>;
  attempts: DeliveryAttempt[];
}

/** Pretty-printed when it is JSON (every body we send is), as stored otherwise. */
function pretty(payload: string): string {
  try {
    return JSON.stringify(JSON.parse(payload), null, 2);
  } catch {
    return payload;
  }
}

/** Why a delivery waits without making its attempt, in words. */
const WAITING_BECAUSE: Record<HoldReason, string> = {
  circuit_open: "for the endpoint's circuit breaker, open after failures in a row, to let a probe through",
  endpoint_busy: 'for its turn: the endpoint has as many attempts in flight as it may, or a backlog ahead of it',
  awaiting_predecessor: "for an earlier change of the same record: the endpoint is ordered per record, and this goes once that one is delivered or failed for good",
};

export function deliveryPage(session: Session, { delivery, endpoint, attempts }: DeliveryPageData): string {
  const traceId = traceIdOf(deliveryTrace(delivery));
  const canResend = session.user.role === 'admin' && (RERUNNABLE_STATUSES as readonly string[]).includes(delivery.status);
  const waiting = waitingReason(delivery);
  return layout({
    title: `Delivery of ${delivery.eventType}`,
    nav: 'deliveries',
    session,
    body: html`
      <dl class="summary">
        <dt>X-Webhook-ID</dt><dd><code id="webhook-id">${delivery.id}</code></dd>
        <dt>Status</dt><dd>${badge(delivery.status)}</dd>
        <dt>Event</dt><dd><code>${delivery.eventType}</code>${delivery.isTest ? ' (test delivery)' : ''}</dd>
        <dt>Endpoint</dt><dd><a href="/console/endpoints/${endpoint.id}">${endpoint.url}</a>${endpoint.status === 'deleted' ? ' (deleted)' : ''}</dd>
        <dt>Made</dt><dd>${time(delivery.createdAt)}</dd>
        <dt>Attempts</dt><dd>${delivery.attemptCount}</dd>
        <dt>Last status code</dt><dd>${delivery.lastStatusCode ?? html`<span class="muted">none</span>`}</dd>
        <dt>Last error</dt><dd>${delivery.lastError ?? html`<span class="muted">none</span>`}</dd>
        ${waiting ? html`<dt>Waits</dt><dd id="waiting-reason">${WAITING_BECAUSE[waiting]}</dd>` : ''}
        ${delivery.nextAttemptAt ? html`<dt>Next attempt</dt><dd>${time(delivery.nextAttemptAt)}</dd>` : ''}
        ${delivery.deliveredAt ? html`<dt>Delivered</dt><dd>${time(delivery.deliveredAt)}</dd>` : ''}
        ${delivery.failedAt ? html`<dt>Failed</dt><dd>${time(delivery.failedAt)}</dd>` : ''}
        ${traceId ? html`<dt>Trace id</dt><dd><code>${traceId}</code></dd>` : ''}
      </dl>
      ${canResend ? postForm(session, `/console/deliveries/${delivery.id}/resend`, html`<button type="submit" class="button">Resend</button> <span class="hint">One more attempt now, with the same X-Webhook-ID.</span>`) : ''}
      <h2>Attempts</h2>
      ${attemptsTable(attempts)}
      ${transformedRequest(delivery)}
      <h2>${delivery.transformedPayload === null ? 'Payload' : 'Event (before the transformation)'}</h2>
      <pre tabindex="0" aria-label="Payload"><code>${pretty(delivery.payload)}</code></pre>`,
  });
}

/** What the endpoint's transformation made of the event, which the attempts sent (docs/transformations.md); nothing without one. */
function transformedRequest(delivery: Pick<WebhookDelivery, 'transformedPayload' | 'transformedHeaders' | 'transformedPath'>): SafeHtml | string {
  if (delivery.transformedPayload === null) return '';
  const headers = Object.entries(delivery.transformedHeaders ?? {}).map(([name, value]) => `${name}: ${value}`);
  return html`<h2>Request sent (transformed)</h2>
    ${delivery.transformedPath === null ? '' : html`<p>To the path <code>${delivery.transformedPath}</code> of the endpoint's URL.</p>`}
    ${headers.length ? html`<pre tabindex="0" aria-label="Transformed headers"><code>${headers.join('\n')}</code></pre>` : ''}
    <pre tabindex="0" aria-label="Request body"><code>${pretty(delivery.transformedPayload)}</code></pre>`;
}

export function alertsPage(session: Session, alerts: { alert: Row<WebhookAlert>; status: string; url: string }[]): string {
  const rows = alerts.map(
    ({ alert, status, url }) => html`<tr>
      <td>${time(alert.createdAt)}</td>
      <td>${alert.delivery ? html`<a href="/console/deliveries/${alert.delivery}">${alert.delivery}</a>` : html`<a href="/console/endpoints/${alert.endpoint}">endpoint disabled</a>`}</td>
      <td class="excerpt">${url}</td>
      <td>${alert.attemptCount}</td>
      <td>${alert.message}</td>
      <td>${badge(status)}</td>
    </tr>`,
  );
  return layout({
    title: 'Alerts',
    nav: 'alerts',
    session,
    body: html`
      <p>A delivery that used up its attempts raises an alert, and so does an endpoint disabled for answering 410 Gone or failing everything. An alert is open until its delivery is delivered or its endpoint enabled again: resend the delivery from its page (or in bulk from its endpoint) once the receiver is fixed.</p>
      ${table('Open alerts, newest first', ['Raised', 'Delivery (X-Webhook-ID)', 'Endpoint', 'Attempts', 'Message', 'Status'], rows, 'No open alerts.')}`,
  });
}

