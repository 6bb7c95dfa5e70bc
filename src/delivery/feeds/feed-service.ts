import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../errors';
import { resolveFeedLagAlert } from './feed-alerts';
import { isSubscribed } from '../endpoints/subscriptions';
import { WebhookEndpoint } from '../endpoints/webhook-endpoint.entity';

/** One event of a feed as it is read: what a webhook of the endpoint would carry, and where it stands in the feed. */
export interface FeedEntry {
  position: number;
  /** deliveryIdFor(event, endpoint): what X-Webhook-ID would carry. */
  id: string;
  eventType: string;
  payload: string;
  createdAt: Date;
}

export interface FeedPage {
  entries: FeedEntry[];
  /** The last position read: past the entries, and past those the endpoint no longer subscribes to. */
  readTo: number;
}

/** Where a feed stands and how far its consumer is behind (the endpoint's `feed` on the API). */
export interface FeedState {
  position: number;
  acknowledged: number;
  unacknowledgedEvents: number;
  oldestUnacknowledgedAt: Date | null;
}

/**
 * A feed's cursor: base64url of `<feed id>.<position>`. Opaque to consumers; naming the feed lets a cursor of another
 * feed be refused rather than read as a position of this one.
 */
export const feedCursor = (feedId: string, position: number) => Buffer.from(`${feedId}.${position}`).toString('base64url');

/** The position a cursor of this feed stands for; a 400 naming `field` for anything else. */
export function positionOf(feedId: string, cursor: string, field: string): number {
  const match = /^([0-9a-f-]{36})\.(\d{1,15})$/.exec(/^[A-Za-z0-9_-]{1,200}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('latin1') : '');
  if (!match) throw ApiError.invalid(field, 'is not a feed cursor (pass a cursor or next_cursor this feed returned)');
  if (match[1] !== feedId) throw ApiError.invalid(field, 'is a cursor of another feed');
  return Number(match[2]);
}

/** The company's feed endpoint; a 404 for another company's or a deleted one, a 400 for a webhook endpoint. */
export async function getFeed(em: EntityManager, companyId: string, id: string): Promise<WebhookEndpoint> {
  const endpoint = await em.findOne(WebhookEndpoint, { id, company: companyId, status: { $ne: 'deleted' } });
  if (!endpoint) throw ApiError.notFound('Webhook endpoint');
  if (endpoint.delivery !== 'feed') throw ApiError.invalid('id', 'is a webhook endpoint: only a feed ("delivery": "feed") is read by cursor');
  return endpoint;
}

/**
 * Refuses a position the feed cannot read after: one retention deleted the events after (a 410 naming the oldest cursor
 * still good), or one beyond its last event.
 */
function checkPosition(feed: WebhookEndpoint, position: number, field: string): void {
  if (position < feed.feedPruned) {
    const oldest = feedCursor(feed.id, feed.feedPruned);
    throw new ApiError(
      'CURSOR_EXPIRED',
      `The events after this cursor were deleted (a feed keeps RETENTION_DELIVERY_DAYS days of events). Resume with after=${oldest}, the oldest event kept, and reconcile what you missed through the REST collections.`,
      { field, reason: 'is older than the events the feed keeps' },
    );
  }
  if (position > feed.feedPosition) throw ApiError.invalid(field, 'is beyond the last event of this feed');
}

/**
 * Up to `limit` events after `position`, in feed order. Positions are assigned in commit order (append_feed_events), so
 * reading after the last position seen never skips an event that commits later. Events the endpoint no longer subscribes
 * to (its event types changed since they were written) are passed over, as its webhook would not have been sent them.
 */
export async function readFeed(em: EntityManager, feed: WebhookEndpoint, position: number, limit: number, field = 'after'): Promise<FeedPage> {
  checkPosition(feed, position, field);
  const rows = await em.execute<{ position: string; id: string; event_key: string; event_type: string; payload: string; created_at: Date }[]>(
    `select position, id, event_key, event_type, payload, created_at from webhook_feed_events
      where endpoint_id = ? and position > ? order by position limit ?`,
    [feed.id, position, limit],
  );
  const entries = rows
    .filter((row) => isSubscribed(feed.eventTypes, row.event_key))
    .map((row) => ({ position: Number(row.position), id: row.id, eventType: row.event_type, payload: row.payload, createdAt: new Date(row.created_at) }));
  return { entries, readTo: rows.length ? Number(rows.at(-1)!.position) : position };
}

/**
 * Commits the consumer's position: a consumer that starts without a cursor resumes after it. An older cursor than the one
 * acknowledged changes nothing (a slow replica of the consumer cannot move it back). The feed_behind alert is resolved
 * once the oldest event still unacknowledged is within the bound.
 */
export async function acknowledgeFeed(em: EntityManager, companyId: string, id: string, cursor: string, lagAlertMs: number): Promise<WebhookEndpoint> {
  const feed = await getFeed(em, companyId, id);
  const position = positionOf(feed.id, cursor, 'cursor');
  checkPosition(feed, position, 'cursor');
  await em.execute('update webhook_endpoints set feed_acknowledged = greatest(feed_acknowledged, ?), updated_at = now() where id = ?', [position, feed.id]);
  await resolveFeedLagAlert(em, feed.id, lagAlertMs);
  await em.refresh(feed);
  return feed;
}

/** Where each of these feeds stands (webhook endpoints are left out), in one statement. */
export async function feedStates(em: EntityManager, endpointIds: string[]): Promise<Map<string, FeedState>> {
  if (endpointIds.length === 0) return new Map();
  const rows = await em.execute<{ id: string; position: string; acknowledged: string; unacknowledged: number; oldest: Date | null }[]>(
    `select e.id, e.feed_position as position, e.feed_acknowledged as acknowledged, lag.unacknowledged, lag.oldest
       from webhook_endpoints e
       cross join lateral (
         select count(*)::int as unacknowledged, min(f.created_at) as oldest from webhook_feed_events f
          where f.endpoint_id = e.id and f.position > e.feed_acknowledged) lag
      where e.id = any(?::uuid[]) and e.delivery = 'feed'`,
    [`{${endpointIds.join(',')}}`],
  );
  return new Map(
    rows.map((row) => [
      row.id,
      {
        position: Number(row.position),
        acknowledged: Number(row.acknowledged),
        unacknowledgedEvents: row.unacknowledged,
        oldestUnacknowledgedAt: row.oldest ? new Date(row.oldest) : null,
      },
    ]),
  );
}
