import type { EndpointFilter, EndpointTransformation } from '../../generated/schemas';
import { PreparedStatement } from '../../db/prepared-statement';
import type { PayloadShape } from '../delivery-body';
import {
  DEFERRED_ROOM,
  DEFERRED_ROOM_COLUMNS,
  type EndpointRoom,
  HAS_DELIVERED,
  IN_TROUBLE,
  OLDEST_IN_FLIGHT_MS,
  OPEN_RUNS,
  BUSY_RUNS,
  RUN_BUDGET,
  STALLED_AFTER_MS,
  UNBEGUN,
} from './endpoint-room';

/*
 * The dispatcher's statements, each named and taking its parameters by name (PreparedStatement's `params`: each name's
 * `$n` place in the text). The counts of an endpoint's runs and the rule of its room are endpoint-room.ts's fragments.
 */

/** A set of ids as a PostgreSQL array literal, for a `uuid[]` parameter. */
export const uuids = (ids: Iterable<string>) => `{${[...ids].join(',')}}`;

/** Each company's (of `companies`, a set of ids) deliveries waiting in Temporal's queue (UNBEGUN), when `enabled`. */
const QUEUED = (enabled: string, companies: string) => `
  select u.company_id, count(*)::int as queued from (${UNBEGUN(`${enabled} and d.company_id in (${companies})`)}) u group by u.company_id`;

/** Whether an endpoint has deliveries deferred and not being started: new ones wait behind them (src/db/sql/functions/endpoint_defers.sql). */
const DEFERRING = (endpoint: string) => `endpoint_defers(${endpoint})`;

/**
 * Whether an event of endpoint `e`'s company waits for its room outside this claim (`claimed`): a fresh event's delivery
 * to it then waits too, behind the older ones.
 */
const WAITED_FOR = `exists (select 1 from outbox_events o where o.company_id = e.company_id and o.dispatched_at is null and o.waits_for is not null
    and e.id = any(o.waits_for) and o.id not in (select id from claimed))`;

/**
 * Claims the next batch of events in one statement: each company with undispatched events (found by a loose index
 * scan), its oldest EVENTS_PER_COMPANY (or its share of the batch, when more) fresh events; of those waiting for a
 * healthy endpoint's room (`waits_for`) as many as a pipeline has room for (`pipeline`: more would be claimed for nothing at
 * each finished attempt), and as many of each endpoint that said it has room (`roomMade`; at a `poll`, of each endpoint its
 * events wait for: a wake-up lost to a race with the batch that left them waiting). They are taken in turns (every
 * company's first fresh and first waiting event, then its second ones, and so on; a company's events stay in order
 * within each kind), skipping those another dispatcher holds, each with its age and the endpoints it has deliveries for
 * already (it was dispatched in part). A company's waiting events never fill its claims: one endpoint's full pipeline
 * does not keep a new event for another out. With the claimed events come their companies' active endpoints (each with
 * its open and busy runs, its budget, whether it is in trouble, whether it defers, and whether events outside the claim wait for
 * it) and (when `countQueued`) each company's deliveries waiting in Temporal's queue (started within the last two minutes, an
 * older one's run is gone or the workers are down, and not yet begun: neither held, admitted nor attempted). Its
 * HAS_DELIVERED is read twice, as is and through RUN_BUDGET: `offset 0` keeps PostgreSQL from evaluating it twice.
 */
export const CLAIM_EVENTS = new PreparedStatement<
  { events: (Omit<EventRow, 'created_at'> & { created_at: string; age_ms: number; written_to: string[] })[]; endpoints: EndpointRow[]; queued: QueuedRow[] },
  {
    eventsPerCompany: number;
    batchSize: number;
    claimSeconds: number;
    countQueued: boolean;
    sittingOut: string;
    pipeline: number;
    roomMade: string;
    poll: boolean;
    runsPerEndpoint: number;
    runsBeforeFirstDelivery: number;
  }
>(
  'claim_outbox_events',
  `with recursive companies(company_id) as (
     (select company_id from outbox_events where dispatched_at is null order by company_id limit 1)
     union all
     select (select o.company_id from outbox_events o where o.dispatched_at is null and o.company_id > c.company_id order by o.company_id limit 1)
       from companies c where c.company_id is not null
   ), share as (
     select greatest($1, $2 / (select count(*) from companies where company_id is not null)) as events
   ), turns as (
     select o.id, row_number() over (partition by c.company_id, o.waits order by o.created_at, o.id) as turn
       from companies c cross join share
       cross join lateral (
         (select o.id, o.created_at, false as waits from outbox_events o
           where o.dispatched_at is null and o.waits_for is null and o.company_id = c.company_id and (o.claimed_until is null or o.claimed_until < now())
           order by o.created_at, o.id limit share.events)
         union all
         select w.id, w.created_at, true from (
           (select o.id, o.created_at from outbox_events o
             where o.dispatched_at is null and o.waits_for is not null and o.company_id = c.company_id and (o.claimed_until is null or o.claimed_until < now())
             order by o.created_at, o.id limit least(share.events, $6))
           union
           select o.id, o.created_at from (
              select e.id from webhook_endpoints e where e.id = any($7::uuid[]) and e.company_id = c.company_id
              union
              select distinct x.endpoint_id from outbox_events w cross join unnest(w.waits_for) x(endpoint_id)
               where $8 and w.dispatched_at is null and w.waits_for is not null and w.company_id = c.company_id
            ) r
            cross join lateral (
              select o.id, o.created_at from outbox_events o
               where o.dispatched_at is null and o.waits_for is not null and o.company_id = c.company_id and r.id = any(o.waits_for)
                 and (o.claimed_until is null or o.claimed_until < now())
               order by o.created_at, o.id limit $6
            ) o
         ) w
       ) o
      where not (c.company_id = any($5::uuid[]))
   ), picked as (
     select o.id from outbox_events o join turns t on t.id = o.id
      where o.dispatched_at is null and (o.claimed_until is null or o.claimed_until < now())
      order by t.turn, o.created_at, o.id limit $2 for update of o skip locked
   ), claimed as (
     update outbox_events o set claimed_until = now() + $3 * interval '1 second' from picked where o.id = picked.id
     returning o.id, o.company_id, o.event_type, o.data, o.catalog_data, o.origin_api_key_id, o.created_at, o.traceparent, o.tracestate, o.record_key, o.record_seq, o.waits_for
   )
   select
     (select coalesce(json_agg(c order by c.created_at, c.id), '[]') from (
        select c.*, (extract(epoch from now() - c.created_at) * 1000)::float8 as age_ms,
               (select coalesce(array_agg(d.endpoint_id), '{}') from webhook_deliveries d where d.event_id = c.id) as written_to
          from claimed c) c) as events,
     (select coalesce(json_agg(e), '[]') from (
        select e.id, e.company_id, e.api_key_id, e.delivery, e.url, e.event_types, e.payload_shape, e.filter, e.transformation, e.updated_at, ${OPEN_RUNS('t.in_trouble')} as open, ${DEFERRING('e.id')} as deferring,
               t.in_trouble, f.oldest_ms > ${STALLED_AFTER_MS} as stalled, case when t.in_trouble then 0 else ${BUSY_RUNS} end as busy,
               h.delivered as has_delivered, ${RUN_BUDGET('h.delivered', '$9', '$10')} as budget,
               ${WAITED_FOR} as waited_for
          from webhook_endpoints e
          cross join lateral (select ${OLDEST_IN_FLIGHT_MS} as oldest_ms) f
          cross join lateral (select ${IN_TROUBLE('f.oldest_ms')} as in_trouble) t
          cross join lateral (select ${HAS_DELIVERED} as delivered offset 0) h
         where e.status = 'active' and e.company_id in (select company_id from claimed)) e) as endpoints,
     (select coalesce(json_agg(q), '[]') from (${QUEUED('$4', 'select company_id from claimed')}) q) as queued`,
  {
    params: {
      eventsPerCompany: 1,
      batchSize: 2,
      claimSeconds: 3,
      countQueued: 4,
      sittingOut: 5,
      pipeline: 6,
      roomMade: 7,
      poll: 8,
      runsPerEndpoint: 9,
      runsBeforeFirstDelivery: 10,
    },
  },
);

/**
 * Writes the claimed events' deliveries (`deliveries`, a JSON array; each names its body by its place in `bodies`, a JSON array of the
 * batch's bodies, one per event and payload shape however many endpoints it goes to: a company's bulk sync to five
 * endpoints sent, and PostgreSQL parsed, each body five times), marks the events dispatched whose deliveries are all
 * written (`dispatched`) and lets go of the others: those left by their company's bounds as they were (`letGo`), those waiting for
 * healthy endpoints' room saying which (`waiting`, a JSON array of their ids and `waits_for`), in one statement. Every
 * delivery is written deferred (its run not known to be started); those to start now (`startNow`) with a claim of CLAIM_SECONDS,
 * cleared once their runs are started. A microsecond apart in event order: an endpoint's deliveries are ordered by
 * created_at (held and deferred ones go oldest first), and one statement's now() would leave a batch's in the random
 * order of their ids.
 */
export const WRITE_DELIVERIES = new PreparedStatement<
  Record<string, never>,
  { deliveries: string; startNow: string; dispatched: string; claimSeconds: number; letGo: string; waiting: string; bodies: string }
>(
  'write_outbox_deliveries',
  `with dispatched as (update outbox_events set dispatched_at = now(), claimed_until = null where id = any($3::uuid[])),
   let_go as (update outbox_events set claimed_until = null where id = any($5::uuid[])),
   waits as (
     update outbox_events o set claimed_until = null, waits_for = w.waits_for
       from json_to_recordset($6::json) as w(id uuid, waits_for uuid[]) where o.id = w.id)
   insert into webhook_deliveries (id, company_id, endpoint_id, event_id, event_type, payload, traceparent, tracestate, record_key, record_seq, deferred_since, start_claimed_until, created_at, updated_at)
   select d.id, d.company_id, d.endpoint_id, d.event_id, d.event_type, b.payload, d.traceparent, d.tracestate, d.record_key, d.record_seq, now(),
          case when d.id = any($2::uuid[]) then now() + $4 * interval '1 second' end, now() + (d.n - 1) * interval '1 microsecond', now()
     from rows from (json_to_recordset($1::json) as (id uuid, company_id uuid, endpoint_id uuid, event_id uuid, event_type text, body int, traceparent text, tracestate text, record_key text, record_seq bigint))
          with ordinality as d(id, company_id, endpoint_id, event_id, event_type, body, traceparent, tracestate, record_key, record_seq, n)
     join rows from (json_array_elements_text($7::json)) with ordinality as b(payload, n) on b.n = d.body
   on conflict (event_id, endpoint_id) do nothing`,
  { params: { deliveries: 1, startNow: 2, dispatched: 3, claimSeconds: 4, letGo: 5, waiting: 6, bodies: 7 } },
);

/**
 * Claims deferred deliveries to start, in one statement: each endpoint that has some (a loose index scan), as many of
 * its oldest as DEFERRED_ROOM allows (its budget's room and its free slots), skipping those another dispatcher is
 * starting; the deferred deliveries of endpoints no longer active are cancelled, saying why. The ones claimed are marked
 * held (they waited already), so that they are let through oldest first; as there are slots for them, each is let
 * through in its run's first workflow task, without the wake-up a held run waits for. With them (when `countQueued`),
 * their companies' deliveries waiting in Temporal's queue, as CLAIM_EVENTS counts them.
 */
export const CLAIM_DEFERRED = new PreparedStatement<
  { deliveries: DeferredRow[]; cancelled: number; queued: QueuedRow[] },
  { runsPerEndpoint: number; claimSeconds: number; countQueued: boolean; maxInFlight: number; firstDeliveryPipeline: number; runsBeforeFirstDelivery: number }
>(
  'claim_deferred_deliveries',
  `with recursive waiting(endpoint_id) as (
     (select endpoint_id from webhook_deliveries where deferred_since is not null order by endpoint_id limit 1)
     union all
     select (select d.endpoint_id from webhook_deliveries d where d.deferred_since is not null and d.endpoint_id > w.endpoint_id order by d.endpoint_id limit 1)
       from waiting w where w.endpoint_id is not null
   ), endpoints as (
     select e.id, e.url, e.status, e.circuit_state, ${DEFERRED_ROOM_COLUMNS({ perEndpoint: '$1', beforeFirstDelivery: '$6', maxInFlight: '$4', firstDeliveryPipeline: '$5' })}
       from webhook_endpoints e join waiting w on w.endpoint_id = e.id
       cross join lateral (select ${IN_TROUBLE(OLDEST_IN_FLIGHT_MS)} as in_trouble) t
       cross join lateral (select ${HAS_DELIVERED} as delivered) h
   ), ended as (
     select cancel_deferred_deliveries(e.id) as cancelled from endpoints e where e.status <> 'active'
   ), picked as (
     select d.id, e.url, e.circuit_state from endpoints e
      cross join lateral (
        select d.id from webhook_deliveries d
         where d.endpoint_id = e.id and d.deferred_since is not null and (d.start_claimed_until is null or d.start_claimed_until < now())
         order by d.created_at, d.id limit ${DEFERRED_ROOM('$4')} for update skip locked
      ) d
      where e.status = 'active'
   ), claimed as (
     update webhook_deliveries d
        set start_claimed_until = now() + $2 * interval '1 second',
            held_until = greatest(d.held_until, now() + $2 * interval '1 second'),
            held_reason = case when p.circuit_state = 'closed' then 'endpoint_busy' else 'circuit_open' end
       from picked p where d.id = p.id
     returning d.id, d.company_id, d.endpoint_id, d.event_id, d.event_type, d.traceparent, d.tracestate, d.created_at, p.url
   )
   select
     (select coalesce(json_agg(c order by c.created_at, c.id), '[]') from claimed c) as deliveries,
     (select coalesce(sum(cancelled), 0)::int from ended) as cancelled,
     (select coalesce(json_agg(q), '[]') from (${QUEUED('$3', 'select company_id from claimed')}) q) as queued`,
  { params: { runsPerEndpoint: 1, claimSeconds: 2, countQueued: 3, maxInFlight: 4, firstDeliveryPipeline: 5, runsBeforeFirstDelivery: 6 } },
);

/**
 * Appends the claimed events (`events`) of feed endpoints to their feeds (`entries`, a JSON array in event order), in one statement:
 * append_feed_events numbers each feed's rows in commit order under the feed's lock and skips those written before (a
 * claim taken over from a dispatcher that died). It holds back, and returns, the events behind an earlier one of their
 * company that another dispatcher holds: a feed keeps its company's events in order whatever number of dispatchers run.
 */
export const APPEND_FEED_EVENTS = new PreparedStatement<{ held: string[] }, { entries: string; events: string }>(
  'append_feed_events',
  'select append_feed_events($1::json, $2::uuid[]) as held',
  { params: { entries: 1, events: 2 } },
);

/**
 * The deliveries whose runs were started (`started`) are deferred no more; a deferred one (marked held by its claim) keeps its
 * claim until its run's first task asks its endpoint (held_to_wake leaves a run being started alone); those not
 * started now (`letGo`) are let go, and those whose start failed (`failed`) keep their claim (tried again once it is over); neither of the two stays marked held, as no
 * run of theirs waits. A started delivery whose run has ended already keeps no hold either: it was claimed again after
 * its run had started and this statement failed, and its claim's hold would count at its endpoint's door for ever.
 *
 * It marks the rows it can lock at once and returns the others (`busy`), for the caller to mark a moment later. Their
 * runs' first attempts hold them meanwhile (eager start), and an attempt's settlement locks its endpoint's row and
 * wakes held deliveries after its own: had this statement waited for a row while holding others, those two (and the
 * next attempt's admission, waiting for the endpoint's row) could wait for one another, and PostgreSQL would cancel one.
 */
export const STARTED = new PreparedStatement<{ busy: string[] }, { started: string; letGo: string; failed: string }>(
  'started_deliveries',
  `with locked as (
     select id, status in ('delivered', 'failed', 'cancelled') as ended from webhook_deliveries
      where id = any($1::uuid[]) or id = any($2::uuid[]) or id = any($3::uuid[]) for no key update skip locked
   ), let_go as (
     update webhook_deliveries d set start_claimed_until = case when d.id = any($2::uuid[]) then null else d.start_claimed_until end, held_until = null, held_reason = null
       from locked l where d.id = l.id and (d.id = any($2::uuid[]) or d.id = any($3::uuid[])) and d.deferred_since is not null
   ), started as (
     update webhook_deliveries d set deferred_since = null, start_claimed_until = case when l.ended or d.held_until is null then null else d.start_claimed_until end,
            held_until = case when l.ended then null else d.held_until end, held_reason = case when l.ended then null else d.held_reason end
       from locked l where d.id = l.id and d.id = any($1::uuid[]))
   select coalesce(array_agg(d.id), '{}') as busy from webhook_deliveries d
    where (d.id = any($1::uuid[]) or d.id = any($2::uuid[]) or d.id = any($3::uuid[])) and d.id not in (select id from locked)`,
  { params: { started: 1, letGo: 2, failed: 3 } },
);

export interface QueuedRow {
  company_id: string;
  queued: number;
}

export interface EventRow {
  id: string;
  company_id: string;
  event_type: string;
  data: Record<string, unknown> | null;
  catalog_data: Record<string, unknown> | null;
  origin_api_key_id: string | null;
  created_at: Date;
  traceparent: string | null;
  tracestate: string | null;
  /** The record the event is about and its place among the record's events (src/events/outbox-event.entity.ts). */
  record_key: string | null;
  record_seq: number | null;
  /** The endpoints whose room it waits for; null while fresh (no dispatcher has left it waiting). */
  waits_for: string[] | null;
}

/** A feed has no URL, and never a delivery: it is never in trouble, never busy, never deferring. */
export type EndpointRow = EndpointState & ({ delivery: 'webhook'; url: string } | { delivery: 'feed'; url: null });

interface EndpointState extends EndpointRoom {
  id: string;
  company_id: string;
  api_key_id: string | null;
  event_types: string[];
  payload_shape: PayloadShape;
  /** Its content filter (endpoint-filter.ts), compiled once per updated_at. */
  filter: EndpointFilter;
  /** A feed's transformation (../endpoints/endpoint-transformation.ts), compiled once per updated_at; a webhook's runs in its attempts. */
  transformation: EndpointTransformation;
  updated_at: string;
  /** Its runs that occupy it now (OPEN_RUNS: none while it is healthy). */
  open: number;
  /** It has deferred deliveries: new ones wait behind them. */
  deferring: boolean;
  /** IN_TROUBLE: what its runs leave is deferred; a healthy endpoint's waits in the outbox. */
  in_trouble: boolean;
  /** An attempt in flight over STALLED_AFTER_MS: what its pipeline leaves is deferred, not left in the outbox. */
  stalled: boolean;
  /** BUSY_RUNS, counted for a healthy endpoint only: its pipeline (HEALTHY_PIPELINE) is what it may have. */
  busy: number;
  /** One of its deliveries has been delivered (HAS_DELIVERED): its full pipeline, or its full budget in trouble. */
  has_delivered: boolean;
  /** WAITED_FOR: events outside the claim wait for its room, so a fresh event's delivery waits behind them. */
  waited_for: boolean;
}

export interface DeferredRow {
  id: string;
  company_id: string;
  endpoint_id: string;
  event_id: string | null;
  event_type: string;
  traceparent: string | null;
  tracestate: string | null;
  url: string;
}
