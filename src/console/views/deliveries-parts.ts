import type { Row } from '../../domain/page';
import type { DeliveryAttempt } from '../../delivery/delivery-attempt.entity';
import type { WebhookDelivery } from '../../delivery/webhook-delivery.entity';
import { html, type SafeHtml } from '../html';
import { badge, table, time } from './components';

/** What the log shows of a delivery, whether read as an entity or as a list row. */
export type DeliveryView = Pick<Row<WebhookDelivery>, 'id' | 'eventType' | 'status' | 'attemptCount' | 'lastStatusCode' | 'lastError' | 'createdAt' | 'isTest'>;

/** Rows of the delivery log: when, what, where, how it went. */
export function deliveryRows<T extends DeliveryView>(deliveries: T[], endpointUrls: Map<string, string>, endpointOf: (d: T) => string): SafeHtml[] {
  return deliveries.map(
    (d) => html`<tr>
      <td><a href="/console/deliveries/${d.id}">${time(d.createdAt)}</a></td>
      <td><code>${d.eventType}</code>${d.isTest ? html` <span class="muted">(test)</span>` : ''}</td>
      <td class="excerpt">${endpointUrls.get(endpointOf(d)) ?? endpointOf(d)}</td>
      <td>${badge(d.status)}</td>
      <td>${d.attemptCount}</td>
      <td>${d.lastStatusCode ?? html`<span class="muted">none</span>`}</td>
      <td class="excerpt">${d.lastError ?? ''}</td>
    </tr>`,
  );
}

export const DELIVERY_HEADINGS = ['Made', 'Event', 'Endpoint', 'Status', 'Attempts', 'Last status code', 'Last error'];

export function attemptsTable(attempts: DeliveryAttempt[]): SafeHtml {
  const rows = attempts.map(
    (a) => html`<tr>
      <td>${a.attemptNumber}</td>
      <td>${a.trigger}</td>
      <td>${time(a.createdAt)}</td>
      <td>${badge(a.outcome)}</td>
      <td>${a.statusCode ?? html`<span class="muted">none</span>`}</td>
      <td>${a.durationMs === null ? '' : `${a.durationMs} ms`}</td>
      <td class="excerpt">${a.error ?? ''}</td>
      <td class="excerpt">${a.responseExcerpt ? html`<code>${a.responseExcerpt}</code>` : ''}</td>
      <td>${a.traceId ? html`<code>${a.traceId}</code>` : html`<span class="muted">none</span>`}</td>
    </tr>`,
  );
  return table(
    'Attempts, first to last',
    ['X-Webhook-Retry', 'Trigger', 'Started', 'Outcome', 'Status code', 'Duration', 'Error', 'Response excerpt', 'Trace id'],
    rows,
    'No attempt has been made yet.',
  );
}
