import type { EntityManager } from '@mikro-orm/postgresql';
import { compactRecordCounts } from './record-counts';

/** How long each kind of history is kept, in days (README, "Configuration": RETENTION_*). */
export interface RetentionPeriods {
  /** Outbox events dispatched this long ago (and not referenced by a delivery still kept). */
  outboxDays: number;
  /** Rate-limit counters whose window ended this long ago. */
  rateLimitDays: number;
  /**
   * Deliveries that finished (delivered, failed or cancelled) this long ago, with their attempts and alerts; endpoint
   * alerts resolved, and bulk recoveries completed, this long ago; and feed events written this long ago.
   */
  deliveryDays: number;
}

/** What the retention workflow prunes, in the order it runs them. */
export type RetentionTarget = 'deliveries' | 'endpointHistory' | 'outbox' | 'rateLimitCounters' | 'recordCounts' | 'feedEvents';

const deletedCount = async (em: EntityManager, sql: string, params: unknown[]) => Number((await em.execute<{ n: string }[]>(sql, params))[0]!.n);

/**
 * One bounded batch of a target: at most `limit` rows, in one short transaction of its own. Rows another
 * transaction holds are skipped (SKIP LOCKED), so pruning never waits on, or holds up, work in progress.
 * Returns how many rows it removed; fewer than `limit` means nothing more is due.
 */
export async function pruneBatch(em: EntityManager, target: RetentionTarget, periods: RetentionPeriods, limit: number): Promise<number> {
  switch (target) {
    case 'deliveries':
      return pruneDeliveries(em, periods.deliveryDays, limit);
    case 'endpointHistory':
      return pruneEndpointHistory(em, periods.deliveryDays, limit);
    case 'outbox':
      // Event ids are UUIDv7, ordered by creation time: the primary key finds old events without an index of
      // their own. created_at decides, so an id of another kind is never taken for an old one.
      return deletedCount(
        em,
        `with cutoff as (select now() - make_interval(days => ?) as at),
         bound as (select (lpad(to_hex((extract(epoch from at) * 1000)::bigint), 12, '0') || '00000000000000000000')::uuid as id from cutoff),
         doomed as (
           select o.id from outbox_events o, cutoff, bound
            where o.id < bound.id and o.created_at < cutoff.at and o.dispatched_at < cutoff.at
              and not exists (select 1 from webhook_deliveries d where d.event_id = o.id)
            order by o.id limit ? for update of o skip locked),
         deleted as (delete from outbox_events o using doomed where o.id = doomed.id returning 1)
         select count(*) as n from deleted`,
        [periods.outboxDays, limit],
      );
    case 'rateLimitCounters':
      // A counter whose window ended is reset by its key's next request anyway; the row only takes space.
      return deletedCount(
        em,
        `with doomed as (
           select ctid from rate_limit_counters
            where window_start + make_interval(secs => window_seconds) < now() - make_interval(days => ?)
            limit ? for update skip locked),
         deleted as (delete from rate_limit_counters c using doomed where c.ctid = doomed.ctid returning 1)
         select count(*) as n from deleted`,
        [periods.rateLimitDays, limit],
      );
    case 'recordCounts':
      return compactRecordCounts(em, limit);
    case 'feedEvents':
      return pruneFeedEvents(em, periods.deliveryDays, limit);
  }
}

/**
 * Feed events written `days` ago, acknowledged or not (a feed keeps RETENTION_DELIVERY_DAYS of events, as the delivery
 * log does), oldest first along each feed's positions; the feed remembers the last position deleted, so that a cursor
 * from before it is told it is gone (410) rather than silently skipping what was deleted.
 */
async function pruneFeedEvents(em: EntityManager, days: number, limit: number): Promise<number> {
  let deleted = 0;
  const feeds = await em.execute<{ id: string }[]>(`select id from webhook_endpoints where delivery = 'feed' order by id`);
  for (const { id } of feeds) {
    const n = await deletedCount(
      em,
      `with doomed as (
         select f.endpoint_id, f.position from webhook_feed_events f
          where f.endpoint_id = ? and f.created_at < now() - make_interval(days => ?)
          order by f.position limit ? for update skip locked),
       deleted as (delete from webhook_feed_events f using doomed where f.endpoint_id = doomed.endpoint_id and f.position = doomed.position returning f.position),
       pruned as (update webhook_endpoints e set feed_pruned = greatest(e.feed_pruned, (select max(position) from deleted)) where e.id = ? and exists (select 1 from deleted))
       select count(*) as n from deleted`,
      [id, days, limit - deleted, id],
    );
    deleted += n;
    if (deleted >= limit) break;
  }
  return deleted;
}

/**
 * Finished deliveries, company by company along their (company, created_at) index; attempts and alerts go with
 * them (foreign keys on delete cascade). A cancelled delivery has no time of its own: its last update is when it
 * was cancelled. A failed delivery's workflow waits 30 days for a re-run, which is why
 * the period has a floor of 31 days (config.ts).
 */
async function pruneDeliveries(em: EntityManager, days: number, limit: number): Promise<number> {
  let deleted = 0;
  const companies = await em.execute<{ id: string }[]>('select id from companies order by id');
  for (const { id } of companies) {
    while (deleted < limit) {
      const n = await deletedCount(
        em,
        `with cutoff as (select now() - make_interval(days => ?) as at),
         doomed as (
           select d.id from webhook_deliveries d, cutoff
            where d.company_id = ? and d.created_at < cutoff.at
              and d.status in ('delivered', 'failed', 'cancelled') and coalesce(d.delivered_at, d.failed_at, d.updated_at) < cutoff.at
            order by d.created_at limit ? for update of d skip locked),
         deleted as (delete from webhook_deliveries d using doomed where d.id = doomed.id returning 1)
         select count(*) as n from deleted`,
        [days, id, limit - deleted],
      );
      deleted += n;
      if (n === 0) break;
    }
    if (deleted >= limit) break;
  }
  return deleted;
}

/**
 * What belongs to no delivery: an endpoint's alerts resolved long ago (it was disabled, then re-enabled) and the
 * records of bulk recoveries completed long ago (their outcome lives in the deliveries they re-ran). Alerts
 * first, then recoveries with what is left of the batch, so a short count means neither has more due.
 */
async function pruneEndpointHistory(em: EntityManager, days: number, limit: number): Promise<number> {
  const alerts = await deletedCount(
    em,
    `with doomed as (
       select id from webhook_alerts
        where delivery_id is null and resolved_at < now() - make_interval(days => ?)
        limit ? for update skip locked),
     deleted as (delete from webhook_alerts a using doomed where a.id = doomed.id returning 1)
     select count(*) as n from deleted`,
    [days, limit],
  );
  if (alerts >= limit) return alerts;
  const recoveries = await deletedCount(
    em,
    `with doomed as (
       select id from webhook_recoveries
        where status = 'completed' and completed_at < now() - make_interval(days => ?)
        limit ? for update skip locked),
     deleted as (delete from webhook_recoveries r using doomed where r.id = doomed.id returning 1)
     select count(*) as n from deleted`,
    [days, limit - alerts],
  );
  return alerts + recoveries;
}
