import type { EntityManager } from '@mikro-orm/postgresql';
import type { Orm } from '../../db/orm';
import type { Logger } from '../../logger';

/** When a feed's oldest event not yet acknowledged was written (an expression on the endpoint `e`); null when none waits. */
const OLDEST_UNACKNOWLEDGED = `(select f.created_at from webhook_feed_events f where f.endpoint_id = e.id and f.position > e.feed_acknowledged order by f.position limit 1)`;

/**
 * Raises a feed_behind alert for every active feed whose oldest unacknowledged event waited longer than `lagAlertMs`
 * (one open alert per feed: a unique index, so workers sweeping at once raise it once), and resolves those of feeds
 * caught up since. Returns the alerts raised.
 */
export async function raiseFeedLagAlerts(em: EntityManager, logger: Logger, lagAlertMs: number): Promise<number> {
  await em.execute(
    `update webhook_alerts a set resolved_at = now(), updated_at = now() from webhook_endpoints e
      where a.kind = 'feed_behind' and a.resolved_at is null and e.id = a.endpoint_id
        and (e.status <> 'active' or coalesce(${OLDEST_UNACKNOWLEDGED} > now() - make_interval(secs => ?), true))`,
    [lagAlertMs / 1000],
  );
  const raised = await em.execute<{ company_id: string; endpoint_id: string; message: string }[]>(
    `with behind as (
       select e.id, e.company_id, o.oldest, (select count(*) from webhook_feed_events f where f.endpoint_id = e.id and f.position > e.feed_acknowledged) as waiting
         from webhook_endpoints e cross join lateral (select ${OLDEST_UNACKNOWLEDGED} as oldest) o
        where e.delivery = 'feed' and e.status = 'active' and o.oldest < now() - make_interval(secs => ?)
          and not exists (select 1 from webhook_alerts a where a.endpoint_id = e.id and a.kind = 'feed_behind' and a.resolved_at is null))
     insert into webhook_alerts (id, company_id, created_at, updated_at, kind, endpoint_id, attempt_count, message)
     select gen_random_uuid(), b.company_id, now(), now(), 'feed_behind', b.id, 0,
            'Feed ' || b.id || ' is behind: ' || b.waiting || ' event(s) unacknowledged, the oldest written ' || to_char(b.oldest at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') ||
            ' (FEED_LAG_ALERT_MINUTES is ' || ? || '). Read GET /api/v1/webhook-endpoints/' || b.id || '/feed and acknowledge with POST /api/v1/webhook-endpoints/' || b.id || '/feed/ack.'
       from behind b
     on conflict (endpoint_id) where kind = 'feed_behind' and resolved_at is null do nothing
     returning company_id, endpoint_id, message`,
    [lagAlertMs / 1000, Math.round(lagAlertMs / 60_000)],
  );
  for (const alert of raised) logger.warn({ endpointId: alert.endpoint_id, companyId: alert.company_id, alert: 'webhook_feed_behind' }, alert.message);
  return raised.length;
}

/** Resolves a feed's feed_behind alert once its oldest unacknowledged event is within the bound (or none waits). */
export async function resolveFeedLagAlert(em: EntityManager, feedId: string, lagAlertMs: number): Promise<void> {
  await em.execute(
    `update webhook_alerts a set resolved_at = now(), updated_at = now() from webhook_endpoints e
      where a.endpoint_id = ? and a.kind = 'feed_behind' and a.resolved_at is null and e.id = a.endpoint_id
        and coalesce(${OLDEST_UNACKNOWLEDGED} > now() - make_interval(secs => ?), true)`,
    [feedId, lagAlertMs / 1000],
  );
}

/** Sweeps for feeds behind every `everyMs` (each worker: the alert is raised once whichever sweeps first). */
export function startFeedLagWatch(deps: { orm: Orm; logger: Logger; lagAlertMs: number; everyMs?: number }): { stop(): void } {
  const timer = setInterval(() => {
    raiseFeedLagAlerts(deps.orm.em.fork() as EntityManager, deps.logger, deps.lagAlertMs).catch((error: unknown) =>
      deps.logger.error({ err: error }, 'checking feeds for lag failed; trying again at the next sweep'),
    );
  }, deps.everyMs ?? 60_000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
