import type { EntityManager } from '@mikro-orm/postgresql';
import { Client as PgClient } from 'pg';
import { v5 as uuidv5 } from 'uuid';
import type { Config } from '../config';
import type { Orm } from '../db/orm';
import { PreparedStatement } from '../db/prepared-statement';
import { StatisticsRefresh } from '../db/statistics-refresh';
import type { EndpointFilter } from '../generated/schemas';
import type { Logger } from '../logger';
import type { WorkerMetrics } from '../metrics';
import { endpointAbout } from '../events/registry';
import type { DeliveryToStart, DeliveryWorkflows } from './delivery-workflows';
import { CompanyDispatchRate } from './outbox/company-dispatch-rate';
import { CompanyQueuedStarts } from './outbox/company-queued-starts';
import { deliveryBody, deliveryEnvelope, type DeliveryEnvelope, type StoredEvent } from './delivery-body';
import { CompiledFilters } from './endpoint-filter';
import { isSubscribed } from './subscriptions';
import type { PayloadShape } from './webhook-endpoint.entity';

/** Namespace of the delivery ids derived from (event, endpoint): the same pair always gets the same id. */
const DELIVERY_ID_NAMESPACE = '6f0b0b8e-6c2e-4a53-9a41-52a3bb2f6e6d';
const BATCH_SIZE = 100;
/**
 * Events of one company in one batch at most while many companies wait (the batch's share of each, when fewer do): a
 * company's burst cannot keep another's events waiting behind it, and a company alone fans out a whole batch at once.
 */
const EVENTS_PER_COMPANY = 20;
const STARTS_IN_PARALLEL = 16;
/**
 * A healthy endpoint's runs at its door or on their way there, per attempt it may have in flight: one making it and one
 * being started meanwhile, so that its slots do not wait for a start; more would be held, each a timer and a wake-up.
 */
export const HEALTHY_PIPELINE = 2;
/**
 * A healthy endpoint none of whose deliveries has been delivered yet (new, or never answered) has a pipeline of one run:
 * until an attempt of its comes back, more runs would only be held at its door, and a company's burst to new endpoints
 * that then hang or refuse would start a full pipeline to each at once (40 runs to five, their TLS handshakes taking the
 * machine for 0.4 s while the company's other endpoints waited). Its first delivery opens the whole pipeline.
 */
const FIRST_DELIVERY_PIPELINE = 1;
/** How long a healthy endpoint's delivery may wait in the outbox for its room before it is written deferred. */
const HEALTHY_WAIT_MS = 10_000;
/**
 * How long a dispatcher holds what it claimed (events to write deliveries of, deliveries to start the runs of): past
 * it, another dispatcher takes them (this one died), and finds what was done already (delivery ids are derived, a run
 * id is started once).
 */
const CLAIM_SECONDS = 30;
/**
 * The deliveries' statistics are refreshed once a dispatcher wrote this many since the last refresh, and a fifth of the
 * table: a company's burst to dead endpoints writes thousands of deferred deliveries a second, and the claims' plans
 * go wrong on the statistics of the table before it (src/db/statistics-refresh.ts).
 */
const STATISTICS_AFTER_ROWS = 1000;
const STATISTICS_AFTER_SHARE = 0.2;

export const deliveryIdFor = (eventId: string, endpointId: string) => uuidv5(`${eventId}/${endpointId}`, DELIVERY_ID_NAMESPACE);

/**
 * Deliveries started and not begun yet (neither held, admitted nor attempted; started within the last two minutes, an
 * older one's run is gone or the workers are down), and those whose runs are being started, where `scope` (a condition
 * on `d`) holds. Each kind is read from a partial index of its own: a dead endpoint's thousands of deferred deliveries
 * are in neither.
 */
const UNBEGUN = (scope: string) => `
  select d.company_id, d.endpoint_id from webhook_deliveries d
   where ${scope} and d.status = 'pending' and d.held_until is null and not d.is_test and d.deferred_since is null and d.created_at > now() - interval '2 minutes'
     and not exists (select 1 from webhook_endpoint_slots s where s.endpoint_id = d.endpoint_id and s.delivery_id = d.id)
     and not exists (select 1 from webhook_delivery_attempts a where a.delivery_id = d.id)
  union all
  select d.company_id, d.endpoint_id from webhook_deliveries d
   where ${scope} and d.start_claimed_until > now() and d.status = 'pending' and d.held_until is null and not d.is_test`;

/**
 * The runs at an endpoint's door, by count: attempts in flight (live slots) and runs it holds (a deferred delivery
 * claimed and being started among them; one whose claim ran out has no run to hold). A run waiting for its record's
 * earlier delivery (ordered per record) waits for that delivery, not for room at the door.
 */
const AT_THE_DOOR = (endpoint: string) => `(
  (select count(*) from webhook_endpoint_slots s where s.endpoint_id = ${endpoint} and s.expires_at > now())
  + (select count(*) from webhook_deliveries d where d.endpoint_id = ${endpoint} and d.held_until is not null and (d.deferred_since is null or d.start_claimed_until > now())
       and d.held_reason is distinct from 'awaiting_predecessor')
)::int`;

/** How long an endpoint `e`'s oldest attempt in flight (a live slot) has been, in milliseconds; 0 when none is. */
const OLDEST_IN_FLIGHT_MS = `coalesce((select extract(epoch from now() - min(s.taken_at)) * 1000
  from webhook_endpoint_slots s where s.endpoint_id = e.id and s.expires_at > now()), 0)`;

/**
 * Whether an endpoint `e` (a webhook_endpoints row) is in trouble, given its OLDEST_IN_FLIGHT_MS: failing, its breaker
 * not closed, or an attempt in flight for over 5 s (it hangs). Only then do its runs count against its budget and its
 * deliveries get deferred: a healthy endpoint's runs go through in their first workflow task, paced by its pipeline
 * (HEALTHY_PIPELINE) and its company's bounds (OUTBOX_COMPANY_MAX_QUEUED, the start rate).
 */
const IN_TROUBLE = (oldestInFlightMs: string) => `(e.failing_since is not null or e.circuit_state <> 'closed' or ${oldestInFlightMs} > 5000)`;

/**
 * A healthy endpoint is stalled when an attempt of its has been in flight over a second: its attempts have stopped
 * coming back. Its deliveries beyond its pipeline are deferred rather than left in the outbox, where they would hold up
 * its company's claims until it counts as in trouble.
 */
const STALLED_AFTER_MS = 1000;

/** Whether one of an endpoint `e`'s deliveries has been delivered (FIRST_DELIVERY_PIPELINE until then). */
const HAS_DELIVERED = `exists (select 1 from webhook_deliveries d where d.endpoint_id = e.id and d.status = 'delivered')`;

/**
 * Whether an endpoint `e` needs a run to probe with: its breaker is open and no run of its is held. The oldest held run
 * makes the probe after the cool-down; an endpoint whose budget is all runs waiting for their next retry (every run of a
 * new endpoint that never answered, whose budget is just what opens its breaker) would otherwise go unprobed until one of
 * those retries, up to hours away. Its budget is one run more then, its oldest deferred delivery's.
 */
const PROBE_WANTED = `(e.circuit_state = 'open' and not exists (select 1 from webhook_deliveries d where d.endpoint_id = e.id and d.held_until is not null))`;

/** The runs at an endpoint `e`'s door (AT_THE_DOOR) or on their way there: started and not begun yet, or being started. */
const BUSY_RUNS = `(${AT_THE_DOOR('e.id')} + (select count(*) from (${UNBEGUN('d.endpoint_id = e.id')}) u))::int`;

/**
 * The runs an endpoint `e` has that occupy it, by count, when `inTrouble` (an IN_TROUBLE): its BUSY_RUNS, those
 * waiting to retry, and those waiting for their record's earlier delivery (ordered per record: behind a retrying one,
 * a record's later changes would otherwise start a run each); 0 for a healthy one.
 */
const OPEN_RUNS = (inTrouble: string) => `(
  case when ${inTrouble}
    then ${BUSY_RUNS}
       + (select count(*) from webhook_deliveries d where d.endpoint_id = e.id and d.status = 'retrying' and d.held_until is null and e.failing_since is not null)
       + (select count(*) from webhook_deliveries d where d.endpoint_id = e.id and d.held_until is not null and d.held_reason = 'awaiting_predecessor')
    else 0 end
)::int`;

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
 * healthy endpoint's room (`waits_for`) as many as a pipeline has room for ($6: more would be claimed for nothing at
 * each finished attempt), and as many of each endpoint that said it has room ($7; at a poll, $8, of each endpoint its
 * events wait for: a wake-up lost to a race with the batch that left them waiting). They are taken in turns (every
 * company's first fresh and first waiting event, then its second ones, and so on; a company's events stay in order
 * within each kind), skipping those another dispatcher holds, each with its age and the endpoints it has deliveries for
 * already (it was dispatched in part). A company's waiting events never fill its claims: one endpoint's full pipeline
 * does not keep a new event for another out. With the claimed events come their companies' active endpoints (each with
 * its open and busy runs, whether it is in trouble, whether it defers, and whether events outside the claim wait for
 * it) and (when $4) each company's deliveries waiting in Temporal's queue (started within the last two minutes, an
 * older one's run is gone or the workers are down, and not yet begun: neither held, admitted nor attempted).
 */
const CLAIM_EVENTS = new PreparedStatement<{ events: (Omit<EventRow, 'created_at'> & { created_at: string; age_ms: number; written_to: string[] })[]; endpoints: EndpointRow[]; queued: { company_id: string; queued: number }[] }>(
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
        select e.id, e.company_id, e.api_key_id, e.delivery, e.url, e.event_types, e.payload_shape, e.filter, e.updated_at, ${OPEN_RUNS('t.in_trouble')} as open, ${DEFERRING('e.id')} as deferring,
               t.in_trouble, f.oldest_ms > ${STALLED_AFTER_MS} as stalled, case when t.in_trouble then 0 else ${BUSY_RUNS} end as busy,
               ${HAS_DELIVERED} as has_delivered,
               ${WAITED_FOR} as waited_for
          from webhook_endpoints e
          cross join lateral (select ${OLDEST_IN_FLIGHT_MS} as oldest_ms) f
          cross join lateral (select ${IN_TROUBLE('f.oldest_ms')} as in_trouble) t
         where e.status = 'active' and e.company_id in (select company_id from claimed)) e) as endpoints,
     (select coalesce(json_agg(q), '[]') from (${QUEUED('$4', 'select company_id from claimed')}) q) as queued`,
);

/**
 * Writes the claimed events' deliveries ($1, a JSON array; each names its body by its place in $7, a JSON array of the
 * batch's bodies, one per event and payload shape however many endpoints it goes to: a company's bulk sync to five
 * endpoints sent, and PostgreSQL parsed, each body five times), marks the events dispatched whose deliveries are all
 * written ($3) and lets go of the others: those left by their company's bounds as they were ($5), those waiting for
 * healthy endpoints' room saying which ($6, a JSON array of their ids and `waits_for`), in one statement. Every
 * delivery is written deferred (its run not known to be started); those to start now ($2) with a claim of CLAIM_SECONDS,
 * cleared once their runs are started. A microsecond apart in event order: an endpoint's deliveries are ordered by
 * created_at (held and deferred ones go oldest first), and one statement's now() would leave a batch's in the random
 * order of their ids.
 */
const WRITE_DELIVERIES = new PreparedStatement(
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
);

/**
 * Claims deferred deliveries to start, in one statement: each endpoint that has some (a loose index scan), as many of
 * its oldest as it has room for ($1 runs at most, $6 until one of its deliveries is delivered, one more while it wants a
 * probe: PROBE_WANTED; OPEN_RUNS counted) and free slots for ($4 attempts in flight at most, less the runs AT_THE_DOOR;
 * a healthy endpoint none of whose deliveries has been delivered, $5 less its BUSY_RUNS), skipping those another
 * dispatcher is starting; the deferred deliveries of endpoints no longer active are cancelled, saying why. The ones
 * claimed are marked held (they waited already), so that they are let through oldest first; as there are slots for
 * them, each is let through in its run's first workflow task, without the wake-up a held run waits for. With them (when
 * $3), their companies' deliveries waiting in Temporal's queue, as CLAIM_EVENTS counts them.
 */
const CLAIM_DEFERRED = new PreparedStatement<{ deliveries: DeferredRow[]; cancelled: number; queued: { company_id: string; queued: number }[] }>(
  'claim_deferred_deliveries',
  `with recursive waiting(endpoint_id) as (
     (select endpoint_id from webhook_deliveries where deferred_since is not null order by endpoint_id limit 1)
     union all
     select (select d.endpoint_id from webhook_deliveries d where d.deferred_since is not null and d.endpoint_id > w.endpoint_id order by d.endpoint_id limit 1)
       from waiting w where w.endpoint_id is not null
   ), endpoints as (
     select e.id, e.url, e.status, e.circuit_state, ${OPEN_RUNS('t.in_trouble')} as open, ${AT_THE_DOOR('e.id')} as at_door,
            case when h.delivered then $1::int else $6::int end + case when ${PROBE_WANTED} then 1 else 0 end as budget,
            case when t.in_trouble or h.delivered then $4 else $5 - ${BUSY_RUNS} end as first_room
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
         order by d.created_at, d.id limit greatest(0, least(e.budget - e.open, $4 - e.at_door, e.first_room)) for update skip locked
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
);

/**
 * Appends the claimed events ($2) of feed endpoints to their feeds ($1, a JSON array in event order), in one statement:
 * append_feed_events numbers each feed's rows in commit order under the feed's lock and skips those written before (a
 * claim taken over from a dispatcher that died). It holds back, and returns, the events behind an earlier one of their
 * company that another dispatcher holds: a feed keeps its company's events in order whatever number of dispatchers run.
 */
const APPEND_FEED_EVENTS = new PreparedStatement<{ held: string[] }>('append_feed_events', 'select append_feed_events($1::json, $2::uuid[]) as held');
/** How soon events held back from a feed are claimed again: the dispatcher ahead of them writes its events in milliseconds. */
const FEED_HELD_RETRY_MS = 100;

/**
 * The deliveries whose runs were started ($1) are deferred no more; a deferred one (marked held by its claim) keeps its
 * claim until its run's first task asks its endpoint (held_to_wake leaves a run being started alone); those not
 * started now ($2) are let go, and those
 * whose start failed ($3) keep their claim (tried again once it is over); neither of the two stays marked held, as no
 * run of theirs waits. A started delivery whose run has ended already keeps no hold either: it was claimed again after
 * its run had started and this statement failed, and its claim's hold would count at its endpoint's door for ever.
 *
 * It marks the rows it can lock at once and returns the others (`busy`), for the caller to mark a moment later. Their
 * runs' first attempts hold them meanwhile (eager start), and an attempt's settlement locks its endpoint's row and
 * wakes held deliveries after its own: had this statement waited for a row while holding others, those two (and the
 * next attempt's admission, waiting for the endpoint's row) could wait for one another, and PostgreSQL would cancel one.
 */
const STARTED = new PreparedStatement<{ busy: string[] }>(
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
);
/**
 * Rounds of STARTED for rows locked by others, and the pause before each: an attempt's statements hold a row for
 * milliseconds. Past the last, a row left unmarked is claimed again once its claim is over (CLAIM_SECONDS).
 */
const STARTED_ROUNDS = 40;
const STARTED_PAUSE_MS = 25;

interface EventRow {
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
type EndpointRow = EndpointState & ({ delivery: 'webhook'; url: string } | { delivery: 'feed'; url: null });

interface EndpointState {
  id: string;
  company_id: string;
  api_key_id: string | null;
  event_types: string[];
  payload_shape: PayloadShape;
  /** Its content filter (endpoint-filter.ts), compiled once per updated_at. */
  filter: EndpointFilter;
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

interface DeferredRow {
  id: string;
  company_id: string;
  endpoint_id: string;
  event_id: string | null;
  event_type: string;
  traceparent: string | null;
  tracestate: string | null;
  url: string;
}

/** A claimed event as delivery-body.ts takes it. */
const storedEvent = (event: EventRow): StoredEvent => ({
  id: event.id,
  companyId: event.company_id,
  eventType: event.event_type,
  occurredAt: event.created_at,
  data: event.data,
  catalogData: event.catalog_data,
});

/**
 * A batch's delivery bodies: each event's envelope made once per payload shape, for the endpoints' filters and for the
 * deliveries written, and written out once for WRITE_DELIVERIES, which names it by its place among `payloads`.
 */
class BatchBodies {
  readonly payloads: string[] = [];
  private readonly made = new Map<string, { envelope: DeliveryEnvelope; place: number | null }>();

  envelope(event: EventRow, shape: PayloadShape): DeliveryEnvelope {
    return this.entry(event, shape).envelope;
  }

  /** The body's event type and its place among `payloads`, counted from 1 as the statement's WITH ORDINALITY counts. */
  of(event: EventRow, shape: PayloadShape): { eventType: string; place: number } {
    const body = this.entry(event, shape);
    body.place ??= this.payloads.push(JSON.stringify(body.envelope.body));
    return { eventType: body.envelope.eventType, place: body.place };
  }

  private entry(event: EventRow, shape: PayloadShape): { envelope: DeliveryEnvelope; place: number | null } {
    const key = `${event.id} ${shape}`;
    let body = this.made.get(key);
    if (!body) {
      body = { envelope: deliveryEnvelope(storedEvent(event), shape), place: null };
      this.made.set(key, body);
    }
    return body;
  }
}

export interface OutboxDispatcherOptions {
  orm: Orm;
  deliveryWorkflows: DeliveryWorkflows;
  databaseUrl: string;
  pollMs: number;
  logger: Logger;
  /**
   * Runs one endpoint in trouble may have that occupy it (in flight, held, begun or not, retrying while it fails); more
   * of its deliveries are deferred: written, their runs started as it makes room.
   */
  maxRunsPerEndpoint: number;
  /** The same for one none of whose deliveries has been delivered yet (runsPerEndpoint says why it is fewer). */
  maxRunsBeforeFirstDelivery: number;
  /** Attempts one endpoint may have in flight (WEBHOOK_ENDPOINT_MAX_IN_FLIGHT): deferred deliveries start into its free slots. */
  maxInFlightPerEndpoint: number;
  /** Deliveries started a second for one company at most (src/delivery/outbox/company-dispatch-rate.ts); absent: no limit. */
  companyStartsPerSecond?: number;
  /** Deliveries of one company waiting in Temporal's queue at most (src/delivery/outbox/company-queued-starts.ts); absent: no bound. */
  companyMaxQueued?: number;
  /** Where events an endpoint's filter left out are counted; absent: not counted. */
  metrics?: Pick<WorkerMetrics, 'eventsFilteredOut'>;
}

/**
 * Turns outbox events into deliveries: one per active endpoint subscribed to the event, except the endpoints
 * of the API key that made the change (echo prevention), each with its delivery workflow.
 *
 * An event's deliveries are written and their runs started as far as their endpoints and companies have room, so that
 * one endpoint's trouble stays its own (docs/isolation.md):
 * - A healthy endpoint has at most HEALTHY_PIPELINE runs per attempt it may have in flight at its door or on their way
 *   there (one run until one of its deliveries is delivered: FIRST_DELIVERY_PIPELINE); its deliveries beyond that wait
 *   in the outbox with their events (the event's other deliveries are written; it is dispatched once all are) until it
 *   says it has room (outbox_room, when an attempt finishes), so that none of its runs is held. One that waited over
 *   HEALTHY_WAIT_MS, or whose endpoint's attempts have stalled (STALLED_AFTER_MS), is deferred instead. A waiting event
 *   says which endpoints it waits for (`waits_for`); a company's claims take its fresh and waiting events in turns, so
 *   that a new event for another endpoint is written at once, and a fresh event's delivery to an endpoint that older
 *   events wait for waits behind them.
 * - An endpoint in trouble (failing, breaker not closed, an attempt hanging) has at most `maxRunsPerEndpoint` runs that
 *   occupy it (in flight, held, not yet begun, or retrying while it fails); more of its deliveries are deferred:
 *   written, and started oldest first as it makes room (told by the endpoint_room notification, or seen at the next
 *   poll). A dead endpoint so costs a few runs, not one per delivery, and a healthy one beside it is not queued behind
 *   its backlog.
 * - A company's deliveries are started at OUTBOX_COMPANY_STARTS_PER_SECOND at most while other companies dispatch too,
 *   and no more while OUTBOX_COMPANY_MAX_QUEUED of them wait in Temporal's queue; what these leave waits in the outbox
 *   (the company sits out until it may start more; an event waiting costs nothing, a deferred delivery a claim). The
 *   company's room goes to its endpoints in turns, so that one endpoint's burst does not take it all.
 * - Companies take turns in a batch (each at most EVENTS_PER_COMPANY events, or its share of the batch when fewer wait), first events first.
 * - A feed endpoint gets no delivery and no run: the batch's events are appended to its feed (APPEND_FEED_EVENTS), in
 *   their company's order, whatever room the webhook endpoints have.
 *
 * Nothing is lost or doubled if a process dies at any point: events and deferred deliveries are claimed for
 * CLAIM_SECONDS (replicas share the work, skipping what another holds), delivery ids are derived from (event, endpoint),
 * a delivery stays deferred until its run is known to be started, and a workflow id can be started once.
 */
export class OutboxDispatcher {
  private listener: PgClient | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** The kick for companies that sat out, when they may start deliveries again. */
  private resumeTimer: NodeJS.Timeout | null = null;
  private readonly rate: CompanyDispatchRate | null;
  private readonly queue: CompanyQueuedStarts | null;
  private running: Promise<void> | null = null;
  private again = false;
  private startingDeferred: Promise<void> | null = null;
  /** The last batch's runs being started (dispatchNext): the next batch starts its own once they are; never rejects. */
  private starts: Promise<void> = Promise.resolve();
  /** Events were held back from a feed behind another dispatcher's: claimed again in FEED_HELD_RETRY_MS. */
  private feedHeldBack = false;
  /** Deferred deliveries may be startable: this dispatcher deferred some, an endpoint made room, or a poll came. */
  private deferredToLookAt = true;
  private stopped = false;
  private readonly filters = new CompiledFilters();
  /** Endpoints that said they have room (outbox_room) since the last claim: their waiting events are claimed first. */
  private readonly roomMade = new Set<string>();
  /** A poll came since the last claim: the waiting events of every endpoint they wait for are claimed. */
  private pollDue = false;
  private readonly statistics: StatisticsRefresh;

  constructor(private readonly options: OutboxDispatcherOptions) {
    this.rate = options.companyStartsPerSecond ? new CompanyDispatchRate(options.companyStartsPerSecond) : null;
    this.queue = options.companyMaxQueued ? new CompanyQueuedStarts(options.companyMaxQueued) : null;
    this.statistics = new StatisticsRefresh({
      table: 'webhook_deliveries',
      em: () => this.em(),
      logger: options.logger,
      minRows: STATISTICS_AFTER_ROWS,
      share: STATISTICS_AFTER_SHARE,
    });
  }

  /** Listens for new events and for endpoints making room (NOTIFY) and polls as a fallback, dispatching until stopped. */
  async start(): Promise<void> {
    await this.listen();
    this.timer = setInterval(() => {
      this.pollDue = true;
      this.kick(true);
    }, this.options.pollMs);
    this.kick(true);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.resumeTimer) clearTimeout(this.resumeTimer);
    await this.running;
    await this.starts;
    await this.startingDeferred;
    await this.statistics.settled();
    await this.listener?.end().catch(() => undefined);
  }

  /** Dispatches one batch of undispatched events and starts its runs; returns how many events were dispatched. */
  async dispatchBatch(): Promise<number> {
    const { dispatched } = await this.dispatchNext();
    await this.starts;
    return dispatched;
  }

  /**
   * Starts the runs of deferred deliveries whose endpoints have room, oldest first, as far as their companies' bounds
   * allow (the rest stay deferred); returns how many were started.
   */
  async startDeferred(): Promise<number> {
    const em = this.em();
    const [claim] = await CLAIM_DEFERRED.rows(em, [
      this.options.maxRunsPerEndpoint,
      CLAIM_SECONDS,
      this.queue !== null,
      this.options.maxInFlightPerEndpoint,
      FIRST_DELIVERY_PIPELINE,
      this.options.maxRunsBeforeFirstDelivery,
    ]);
    const claimed = claim!.deliveries.map((row) => this.toStart(row, row.url));
    if (claimed.length === 0) return 0;
    const now = this.withinCompanyBounds(claimed, new Map(claim!.queued.map((row) => [row.company_id, row.queued])));
    return this.startRuns(
      em,
      now,
      claimed.filter((delivery) => !now.includes(delivery)),
    );
  }

  /**
   * One batch of events; `more`: the outbox may hold more for a next batch now (the batch was full, or a company filled
   * its turns). Its runs are started once the batch before's are, and `starts` becomes that work. A batch
   * that starts runs to new or troubled endpoints (a burst's first runs to endpoints that hang or refuse take tens of
   * milliseconds to start) returns before they are started: the next batch is claimed and written meanwhile, so that an
   * event committed then does not wait for them. Runs being started count at their endpoints' doors from the moment
   * they are written (start_claimed_until), so the next claim sees them. A batch of runs to endpoints that answer only
   * returns once they are started: a steady stream of events to them is then claimed a few at a time, not one a batch.
   */
  private async dispatchNext(): Promise<{ dispatched: number; more: boolean }> {
    const em = this.em();
    const sittingOut = this.sittingOut();
    const [claim] = await CLAIM_EVENTS.rows(em, [
      EVENTS_PER_COMPANY,
      BATCH_SIZE,
      CLAIM_SECONDS,
      this.queue !== null,
      `{${sittingOut.join(',')}}`,
      HEALTHY_PIPELINE * this.options.maxInFlightPerEndpoint,
      `{${this.takeRoomMade().join(',')}}`,
      this.takePoll(),
    ]);
    const events = claim!.events.map((event) => ({ ...event, created_at: new Date(event.created_at) }));
    if (events.length === 0) return { dispatched: 0, more: this.cameBack(sittingOut) };
    const endpoints = new Map(claim!.endpoints.map((endpoint) => [endpoint.id, endpoint]));
    // An event partly dispatched before (a healthy endpoint had no room for it) has the rest of its deliveries to write.
    const deliveries: DeliveryToStart[] = [];
    const eventOf = new Map<DeliveryToStart, (typeof events)[number]>();
    // The endpoints each event's filter left out, counted once the event is dispatched (one that waits comes back).
    const filteredOut = new Map<string, string[]>();
    // A feed's events are written to it, whatever room webhook endpoints have: a feed takes no run.
    const feedRows: Record<string, unknown>[] = [];
    const bodies = new BatchBodies();
    for (const event of events) {
      const written = new Set(event.written_to);
      for (const endpoint of recipientsOf(event, claim!.endpoints)) {
        if (endpoint.delivery === 'webhook' && written.has(endpoint.id)) continue;
        // A feed's filter too: an event it leaves out is not in the feed.
        if (!this.passesFilter(event, endpoint, bodies)) {
          filteredOut.set(event.id, [...(filteredOut.get(event.id) ?? []), endpoint.id]);
          continue;
        }
        if (endpoint.delivery === 'feed') {
          feedRows.push(this.feedRow(event, endpoint));
          continue;
        }
        const delivery = this.toStart(
          { id: deliveryIdFor(event.id, endpoint.id), company_id: event.company_id, endpoint_id: endpoint.id, event_id: event.id, event_type: event.event_type, traceparent: event.traceparent, tracestate: event.tracestate },
          endpoint.url,
        );
        deliveries.push(delivery);
        eventOf.set(delivery, event);
      }
    }
    const queued = new Map(claim!.queued.map((row) => [row.company_id, row.queued]));
    // A fresh event's delivery to an endpoint that older events wait for outside the claim waits behind them.
    const behindWaiting = (delivery: DeliveryToStart) => eventOf.get(delivery)!.waits_for === null && endpoints.get(delivery.input.endpointId)?.waited_for === true;
    const { fitting, now: startable } = this.startable(deliveries, endpoints, queued, behindWaiting);
    const chosen = new Set(startable);
    const fits = new Set(fitting);
    // Deliveries its company's bounds left, though their endpoints had room: from the first event with one, the
    // company's events stay in the outbox and it sits out until it may start more (a deferred delivery would cost a
    // claim and a hold each; an event waiting costs nothing).
    const leftByCompany = new Set(fitting.filter((delivery) => !chosen.has(delivery)).map((delivery) => delivery.eventId));
    const sittingOutNow = new Set<string>();
    const letGo = new Set<string>();
    for (const event of events) {
      if (!sittingOutNow.has(event.company_id) && !leftByCompany.has(event.id)) continue;
      sittingOutNow.add(event.company_id);
      letGo.add(event.id);
    }
    // Before the events are marked dispatched: a dispatcher dying in between leaves them to be claimed again. Events a
    // feed held back are let go whole, their deliveries written when they are claimed again.
    if (feedRows.length) {
      const [{ held }] = (await APPEND_FEED_EVENTS.rows(em, [JSON.stringify(feedRows), `{${events.map((event) => event.id).join(',')}}`])) as [{ held: string[] }];
      for (const eventId of held) letGo.add(eventId);
      if (held.length) this.feedHeldBack = true;
    }
    // A flowing endpoint's deliveries it has no room for wait in the outbox with their events (its other deliveries are
    // written), until it says it has room; those of an event waiting over HEALTHY_WAIT_MS are deferred instead, so
    // that a slow endpoint's backlog cannot fill its company's claims.
    const waiting = deliveries.filter(
      (delivery) => !fits.has(delivery) && !letGo.has(delivery.eventId!) && isFlowing(endpoints.get(delivery.input.endpointId)) && eventOf.get(delivery)!.age_ms < HEALTHY_WAIT_MS,
    );
    const waitsFor = new Map<string, string[]>();
    for (const delivery of waiting) waitsFor.set(delivery.eventId!, [...(waitsFor.get(delivery.eventId!) ?? []), delivery.input.endpointId]);
    const waitingEvents = new Set(waitsFor.keys());
    const waits = new Set(waiting);
    const written = deliveries.filter((delivery) => !letGo.has(delivery.eventId!) && !waits.has(delivery));
    const dispatched = events.filter((event) => !letGo.has(event.id) && !waitingEvents.has(event.id));
    const now = startable.filter((delivery) => !letGo.has(delivery.eventId!));
    // Deliveries left for lack of room start as their endpoints make room (which they say); only those left behind
    // older deferred ones may be startable before that.
    const deferred = written.filter((delivery) => !chosen.has(delivery));
    if (deferred.some((delivery) => this.hadRoom(endpoints.get(delivery.input.endpointId)))) this.deferredToLookAt = true;
    await WRITE_DELIVERIES.rows(em, [
      JSON.stringify(written.map((delivery) => this.writtenRow(delivery, eventOf.get(delivery)!, endpoints.get(delivery.input.endpointId)!, bodies))),
      `{${now.map((d) => d.input.deliveryId).join(',')}}`,
      `{${dispatched.map((e) => e.id).join(',')}}`,
      CLAIM_SECONDS,
      `{${[...letGo].join(',')}}`,
      JSON.stringify([...waitsFor].map(([id, endpointIds]) => ({ id, waits_for: endpointIds }))),
      JSON.stringify(bodies.payloads),
    ]);
    this.statistics.noteWritten(written.length);
    for (const event of dispatched) for (const endpointId of filteredOut.get(event.id) ?? []) this.options.metrics?.eventsFilteredOut.inc({ endpoint_id: endpointId });
    // Endpoints that answer go first: a company's new or troubled endpoints' runs, started beside them, would hold up
    // their first workflow tasks on the worker. A failure is logged here: the next batch goes on, and a delivery whose
    // start or marking failed keeps its claim, to be taken up again when it ends.
    const flowing = (delivery: DeliveryToStart) => isFlowing(endpoints.get(delivery.input.endpointId));
    this.starts = this.starts
      .then(() => this.startRuns(em, now, [], flowing))
      .then(
        () => undefined,
        (error: unknown) => this.options.logger.error({ err: error }, `marking started runs failed; their deliveries are claimed again in ${CLAIM_SECONDS} s`),
      );
    if (now.length > 0 && now.every(flowing)) await this.starts;
    if (deliveries.length) this.options.logger.debug({ events: events.length, deliveries: deliveries.length, started: now.length }, 'outbox dispatched');
    // Fresh events left behind the claim (a company filled its turns of them) are what a next batch would find; the
    // waiting ones come back with their endpoints' room.
    const freshOf = new Map<string, number>();
    for (const event of events) if (event.waits_for === null) freshOf.set(event.company_id, (freshOf.get(event.company_id) ?? 0) + 1);
    // A batch that wrote nothing and left no fresh event waiting found only events waiting for room: the next comes
    // with room, a new event or a poll.
    const progressed = written.length > 0 || dispatched.length > 0 || events.some((event) => event.waits_for === null && waitingEvents.has(event.id));
    const more = progressed && (events.length === BATCH_SIZE || [...freshOf.values()].some((count) => count >= EVENTS_PER_COMPANY));
    return { dispatched: dispatched.length, more: more || this.cameBack(sittingOut) };
  }

  /** Companies that sit out of the next claim: their start rate spent, or their deliveries queued in Temporal at its bound. */
  private sittingOut(): string[] {
    return [...(this.rate?.exhausted() ?? []), ...(this.queue?.full() ?? [])];
  }

  /**
   * Whether a company that sat out of a claim (`satOut`) may take part already: its wait ended while the claim ran. The
   * timer that was to bring it back has fired then (a timer may fire a moment early), and none would be set again.
   */
  private cameBack(satOut: string[]): boolean {
    const stillOut = new Set(this.sittingOut());
    return satOut.some((companyId) => !stillOut.has(companyId));
  }

  /**
   * The row of a delivery as WRITE_DELIVERIES takes it, naming its body in its endpoint's shape among the batch's
   * `bodies`; the delivery's run takes the event type that body names. Made only for the deliveries written: those that
   * wait cost no body.
   */
  private writtenRow(delivery: DeliveryToStart, event: EventRow, endpoint: EndpointRow, bodies: BatchBodies): Record<string, unknown> {
    const body = bodies.of(event, endpoint.payload_shape);
    delivery.input = { ...delivery.input, eventType: body.eventType };
    return {
      id: delivery.input.deliveryId,
      company_id: event.company_id,
      endpoint_id: endpoint.id,
      event_id: event.id,
      event_type: body.eventType,
      body: body.place,
      traceparent: event.traceparent,
      tracestate: event.tracestate,
      record_key: event.record_key,
      record_seq: event.record_seq,
    };
  }

  /** Whether the event's body, as the endpoint would be sent it (made once per shape of the event: `bodies`), matches the endpoint's filter. */
  private passesFilter(event: EventRow, endpoint: EndpointRow, bodies: BatchBodies): boolean {
    if (endpoint.filter === null) return true;
    return this.filters.of(endpoint.id, endpoint.updated_at, endpoint.filter)(bodies.envelope(event, endpoint.payload_shape).body);
  }

  /** The row of a feed's entry as append_feed_events takes it: the body its webhook would carry, and its X-Webhook-ID. */
  private feedRow(event: EventRow, endpoint: EndpointRow): Record<string, unknown> {
    const body = deliveryBody(storedEvent(event), endpoint.payload_shape);
    return {
      id: deliveryIdFor(event.id, endpoint.id),
      company_id: event.company_id,
      endpoint_id: endpoint.id,
      event_id: event.id,
      event_key: event.event_type,
      event_type: body.eventType,
      payload: body.payload,
    };
  }

  /**
   * The runs an endpoint may get started now: a healthy one what its pipeline has room for (HEALTHY_PIPELINE, or
   * FIRST_DELIVERY_PIPELINE before its first delivery; an event waiting in the outbox costs nothing); one in trouble its
   * budget's room; none behind deferred ones.
   */
  private roomOf(endpoint: EndpointRow): number {
    if (endpoint.deferring) return 0;
    if (!endpoint.in_trouble) {
      const pipeline = endpoint.has_delivered ? HEALTHY_PIPELINE * this.options.maxInFlightPerEndpoint : FIRST_DELIVERY_PIPELINE;
      return Math.max(0, pipeline - endpoint.busy);
    }
    return Math.max(0, this.budgetOf(endpoint) - endpoint.open);
  }

  /** The runs an endpoint in trouble may have that occupy it: fewer until its first delivery (runsPerEndpoint). */
  private budgetOf(endpoint: EndpointRow): number {
    return endpoint.has_delivered ? this.options.maxRunsPerEndpoint : this.options.maxRunsBeforeFirstDelivery;
  }

  private hadRoom(endpoint: EndpointRow | undefined): boolean {
    return endpoint !== undefined && endpoint.open < this.budgetOf(endpoint);
  }

  /**
   * Of a batch's deliveries, in event order, those their endpoints have room for (`fitting`: each endpoint's while it has
   * room, none behind deferred ones or behind events waiting outside the claim), and of those the ones whose runs may start now, as far as their companies' bounds
   * allow.
   */
  private startable(
    deliveries: DeliveryToStart[],
    endpoints: Map<string, EndpointRow>,
    queued: Map<string, number>,
    behindWaiting: (delivery: DeliveryToStart) => boolean,
  ): { fitting: DeliveryToStart[]; now: DeliveryToStart[] } {
    const room = new Map([...endpoints.values()].map((endpoint) => [endpoint.id, this.roomOf(endpoint)]));
    const fitting = deliveries.filter((delivery) => {
      if (behindWaiting(delivery)) return false;
      const left = room.get(delivery.input.endpointId) ?? 0;
      // Once an endpoint is out of room, it stays so for the batch: its deliveries keep their order.
      room.set(delivery.input.endpointId, left - 1);
      return left > 0;
    });
    return { fitting, now: this.withinCompanyBounds(fitting, queued) };
  }

  /**
   * Of deliveries in order, those each company's bounds let start now (its deliveries queued in Temporal, its rate), its
   * endpoints taking turns at its room: an endpoint's n-th delivery comes in the n-th turn. An endpoint's deliveries
   * keep their order: once one of them waits, the ones after it do too.
   */
  private withinCompanyBounds(deliveries: DeliveryToStart[], queued: Map<string, number>): DeliveryToStart[] {
    if (!this.rate && !this.queue) return deliveries;
    const byCompany = groupBy(deliveries, (delivery) => delivery.input.companyId);
    this.rate?.noteActive(byCompany.keys());
    const chosen = new Set<DeliveryToStart>();
    for (const [companyId, own] of byCompany) {
      const turnOf = new Map<DeliveryToStart, number>();
      const seen = new Map<string, number>();
      for (const delivery of own) {
        const turn = seen.get(delivery.input.endpointId) ?? 0;
        seen.set(delivery.input.endpointId, turn + 1);
        turnOf.set(delivery, turn);
      }
      const inTurns = [...own].sort((a, b) => turnOf.get(a)! - turnOf.get(b)!);
      const ones = inTurns.map(() => 1);
      let allowed = inTurns.length;
      if (this.queue) allowed = Math.min(allowed, this.queue.admit(companyId, queued.get(companyId) ?? 0, ones));
      if (this.rate) allowed = Math.min(allowed, this.rate.admit(companyId, ones.slice(0, allowed)));
      const taken = new Set(inTurns.slice(0, allowed));
      const waiting = new Set<string>();
      for (const delivery of own) {
        if (waiting.has(delivery.input.endpointId)) continue;
        if (taken.has(delivery)) chosen.add(delivery);
        else waiting.add(delivery.input.endpointId);
      }
    }
    return deliveries.filter((delivery) => chosen.has(delivery));
  }

  /**
   * Starts the runs, then marks those started (a run already there counts: another dispatcher started it) and lets go of
   * `notNow` (claimed, but left by their company's bounds); a delivery whose start failed keeps its claim, so that it is
   * tried again once the claim is over (CLAIM_SECONDS), not at once against a server that refused it. The runs `first`
   * picks are started before the others: a run's first workflow task comes back with its start (eager start), and the
   * worker takes them in turn. Returns how many were started.
   */
  private async startRuns(em: EntityManager, deliveries: DeliveryToStart[], notNow: DeliveryToStart[], first: (delivery: DeliveryToStart) => boolean = () => true): Promise<number> {
    if (deliveries.length === 0 && notNow.length === 0) return 0;
    const started: string[] = [];
    const start = async (delivery: DeliveryToStart) => {
      try {
        await this.options.deliveryWorkflows.start(delivery);
        started.push(delivery.input.deliveryId);
      } catch (error) {
        this.options.logger.warn({ err: error, deliveryId: delivery.input.deliveryId }, `could not start a delivery run; it is tried again in ${CLAIM_SECONDS} s`);
      }
    };
    await runInParallel(deliveries.filter(first), STARTS_IN_PARALLEL, start);
    await runInParallel(deliveries.filter((delivery) => !first(delivery)), STARTS_IN_PARALLEL, start);
    const failed = deliveries.filter((delivery) => !started.includes(delivery.input.deliveryId));
    let marks = [started, notNow.map((delivery) => delivery.input.deliveryId), failed.map((delivery) => delivery.input.deliveryId)];
    for (let round = 1; marks.some((ids) => ids.length > 0); round++) {
      if (round > STARTED_ROUNDS) {
        this.options.logger.warn({ deliveryIds: marks.flat() }, `deliveries locked by others could not be marked started; they are claimed again in ${CLAIM_SECONDS} s`);
        break;
      }
      if (round > 1) await new Promise((resolve) => setTimeout(resolve, STARTED_PAUSE_MS));
      const [row] = await STARTED.rows(em, marks.map((ids) => `{${ids.join(',')}}`));
      const busy = new Set(row?.busy ?? []);
      marks = marks.map((ids) => ids.filter((id) => busy.has(id)));
    }
    return started.length;
  }

  private toStart(row: Omit<DeferredRow, 'url'>, url: string): DeliveryToStart {
    return {
      input: { deliveryId: row.id, companyId: row.company_id, endpointId: row.endpoint_id, eventType: row.event_type },
      endpointUrl: url,
      eventId: row.event_id,
      trace: row.traceparent ? { traceparent: row.traceparent, tracestate: row.tracestate } : null,
    };
  }

  private takePoll(): boolean {
    const due = this.pollDue;
    this.pollDue = false;
    return due;
  }

  private takeRoomMade(): string[] {
    const endpointIds = [...this.roomMade];
    this.roomMade.clear();
    return endpointIds;
  }

  private em(): EntityManager {
    return this.options.orm.em.fork() as EntityManager;
  }

  /**
   * Runs batches until the outbox is drained; a kick while running schedules one more pass. `deferred`: also look at the
   * deferred deliveries (a poll, an endpoint's room), in a lane of their own, so that new events never wait behind them.
   */
  private kick(deferred = false): void {
    if (deferred) this.kickDeferred();
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          // While a batch may have left events behind for lack of room; events committed meanwhile kick again.
          let more = true;
          while (!this.stopped && more) ({ more } = await this.dispatchNext());
        } catch (error) {
          this.options.logger.error({ err: error }, 'outbox dispatch failed; retrying at the next poll');
        }
        // Companies that sat out come back as soon as they may start more, not at the next poll.
        this.resumeLater();
        if (this.deferredToLookAt) this.kickDeferred();
      } while (this.again && !this.stopped);
    })().finally(() => {
      this.running = null;
    });
  }

  /** Starts deferred deliveries until none is left to start; a kick while running schedules one more pass. */
  private kickDeferred(): void {
    this.deferredToLookAt = true;
    if (this.stopped || this.startingDeferred) return;
    this.startingDeferred = (async () => {
      while (this.deferredToLookAt && !this.stopped) {
        this.deferredToLookAt = false;
        try {
          await this.startDeferred();
        } catch (error) {
          this.options.logger.error({ err: error }, 'starting deferred deliveries failed; retrying at the next poll');
        }
      }
      this.resumeLater();
    })().finally(() => {
      this.startingDeferred = null;
    });
  }

  /**
   * Kicks again, for its events and deferred deliveries, once a company that sat out may start deliveries, or events held
   * back from a feed may go (sooner than the next poll).
   */
  private resumeLater(): void {
    const waits = [this.rate?.msUntilNext(), this.queue?.msUntilNext(), this.feedHeldBack ? FEED_HELD_RETRY_MS : undefined].filter((ms) => typeof ms === 'number');
    if (waits.length === 0 || this.stopped || this.resumeTimer) return;
    const ms = Math.min(...waits);
    this.resumeTimer = setTimeout(() => {
      this.resumeTimer = null;
      this.feedHeldBack = false;
      this.kick(true);
    }, ms);
  }

  private async listen(): Promise<void> {
    const listener = new PgClient({ connectionString: this.options.databaseUrl });
    // Room at an endpoint (endpoint_room) is for its deferred deliveries; outbox_room for events that waited for it.
    listener.on('notification', (message) => {
      if (message.channel === 'endpoint_room') return this.kickDeferred();
      if (message.channel === 'outbox_room' && message.payload) this.roomMade.add(message.payload);
      this.kick();
    });
    listener.on('error', (error) => {
      this.options.logger.warn({ err: error }, 'outbox listener lost its connection; polling until it is back');
      this.listener = null;
      listener.end().catch(() => undefined);
      this.relisten();
    });
    await listener.connect();
    await listener.query('listen outbox_events; listen endpoint_room; listen outbox_room');
    this.listener = listener;
  }

  private relisten(): void {
    if (this.stopped) return;
    setTimeout(() => this.listen().catch(() => this.relisten()), 1000);
  }
}

/**
 * Neither in trouble, stalled nor with deferred deliveries, and one of its deliveries has been delivered: its attempts
 * come back, and its runs go through as they start. What a new endpoint's one run leaves is deferred, not left waiting
 * in the outbox: until it answers, nothing says its room will come soon.
 */
const isFlowing = (endpoint: EndpointRow | undefined) =>
  endpoint !== undefined && !endpoint.in_trouble && !endpoint.stalled && !endpoint.deferring && endpoint.has_delivered;

/**
 * The endpoints an event goes to: the company's active ones subscribed to it, except those of the API key that made it
 * (echo prevention) and the one an operational event is about (no loops).
 */
function recipientsOf(event: EventRow, endpoints: EndpointRow[]): EndpointRow[] {
  const about = endpointAbout(event.event_type, event.data);
  return endpoints.filter(
    (endpoint) =>
      endpoint.company_id === event.company_id &&
      isSubscribed(endpoint.event_types, event.event_type) &&
      !(endpoint.api_key_id !== null && endpoint.api_key_id === event.origin_api_key_id) &&
      endpoint.id !== about,
  );
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(key(item));
    if (group) group.push(item);
    else groups.set(key(item), [item]);
  }
  return groups;
}

async function runInParallel<T>(items: T[], limit: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!);
  });
  await Promise.all(lanes);
}

/** Starts a dispatcher configured from the service settings. */
export async function startOutboxDispatcher(deps: {
  config: Config;
  orm: Orm;
  deliveryWorkflows: DeliveryWorkflows;
  logger: Logger;
  metrics?: Pick<WorkerMetrics, 'eventsFilteredOut'>;
}): Promise<OutboxDispatcher> {
  const dispatcher = new OutboxDispatcher({
    orm: deps.orm,
    deliveryWorkflows: deps.deliveryWorkflows,
    databaseUrl: deps.config.databaseUrl,
    pollMs: deps.config.outboxPollMs,
    logger: deps.logger,
    ...runsPerEndpoint(deps.config.webhooks.admission),
    maxInFlightPerEndpoint: deps.config.webhooks.admission.maxInFlight,
    companyStartsPerSecond: deps.config.outboxCompanyStartsPerSecond || undefined,
    companyMaxQueued: deps.config.outboxCompanyMaxQueued || undefined,
    metrics: deps.metrics,
  });
  await dispatcher.start();
  return dispatcher;
}

/**
 * The runs an endpoint in trouble may have that occupy it: three for each attempt it may have in flight (one making it,
 * two waiting to), and never fewer than its breaker needs to see fail to open (WEBHOOK_CIRCUIT_FAILURES counts
 * deliveries). Until one of its deliveries has been delivered, just those its breaker needs: nothing says it will take
 * more, and a company's burst to new endpoints that refuse or hang started a full budget's runs to each in its first
 * seconds (24 runs to two refusing ones, 36 to three hanging ones), the company's healthy endpoint waiting behind them.
 */
export const runsPerEndpoint = ({
  maxInFlight,
  failureThreshold,
}: Pick<Config['webhooks']['admission'], 'maxInFlight' | 'failureThreshold'>): Pick<OutboxDispatcherOptions, 'maxRunsPerEndpoint' | 'maxRunsBeforeFirstDelivery'> => ({
  maxRunsPerEndpoint: Math.max(3 * maxInFlight, failureThreshold),
  maxRunsBeforeFirstDelivery: failureThreshold,
});
