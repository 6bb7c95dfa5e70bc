import type { Config } from '../../config';

/*
 * The rule of an endpoint's room: how many runs it may have, and so whether a delivery of its gets a run now, waits in
 * the outbox or is written deferred (docs/isolation.md "Inside a company"). Its numbers are stated here once; the
 * dispatcher's statements (statements.ts) count runs and decide with the SQL fragments below, and the claim lane reads
 * the budget they return (RUN_BUDGET), so the two lanes cannot disagree. test/unit/endpoint-room.test.ts pins them.
 */

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
export const FIRST_DELIVERY_PIPELINE = 1;
/**
 * An endpoint is in trouble once an attempt of its has been in flight this long (it hangs); failing, or its breaker not
 * closed, it is in trouble already (IN_TROUBLE).
 */
const IN_TROUBLE_AFTER_MS = 5000;
/**
 * A healthy endpoint is stalled when an attempt of its has been in flight over a second: its attempts have stopped
 * coming back. Its deliveries beyond its pipeline are deferred rather than left in the outbox, where they would hold up
 * its company's claims until it counts as in trouble.
 */
export const STALLED_AFTER_MS = 1000;

/**
 * The runs an endpoint in trouble may have that occupy it: three for each attempt it may have in flight (one making it,
 * two waiting to), and never fewer than its breaker needs to see fail to open (WEBHOOK_CIRCUIT_FAILURES counts
 * deliveries). Until one of its deliveries has been delivered, just those its breaker needs: nothing says it will take
 * more, and a company's burst to new endpoints that refuse or hang started a full budget's runs to each in its first
 * seconds (24 runs to two refusing ones, 36 to three hanging ones), the company's healthy endpoint waiting behind them.
 */
export const runsPerEndpoint = ({ maxInFlight, failureThreshold }: Pick<Config['webhooks']['admission'], 'maxInFlight' | 'failureThreshold'>): RunBudgets => ({
  maxRunsPerEndpoint: Math.max(3 * maxInFlight, failureThreshold),
  maxRunsBeforeFirstDelivery: failureThreshold,
});

export interface RunBudgets {
  /**
   * Runs one endpoint in trouble may have that occupy it (in flight, held, begun or not, retrying while it fails); more
   * of its deliveries are deferred: written, their runs started as it makes room.
   */
  maxRunsPerEndpoint: number;
  /** The same for one none of whose deliveries has been delivered yet (runsPerEndpoint says why it is fewer). */
  maxRunsBeforeFirstDelivery: number;
}

/**
 * Deliveries started and not begun yet (neither held, admitted nor attempted; started within the last two minutes, an
 * older one's run is gone or the workers are down), and those whose runs are being started, where `scope` (a condition
 * on `d`) holds. Each kind is read from a partial index of its own: a dead endpoint's thousands of deferred deliveries
 * are in neither.
 */
export const UNBEGUN = (scope: string) => `
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
export const AT_THE_DOOR = (endpoint: string) => `(
  (select count(*) from webhook_endpoint_slots s where s.endpoint_id = ${endpoint} and s.expires_at > now())
  + (select count(*) from webhook_deliveries d where d.endpoint_id = ${endpoint} and d.held_until is not null and (d.deferred_since is null or d.start_claimed_until > now())
       and d.held_reason is distinct from 'awaiting_predecessor')
)::int`;

/** How long an endpoint `e`'s oldest attempt in flight (a live slot) has been, in milliseconds; 0 when none is. */
export const OLDEST_IN_FLIGHT_MS = `coalesce((select extract(epoch from now() - min(s.taken_at)) * 1000
  from webhook_endpoint_slots s where s.endpoint_id = e.id and s.expires_at > now()), 0)`;

/**
 * Whether an endpoint `e` (a webhook_endpoints row) is in trouble, given its OLDEST_IN_FLIGHT_MS: failing, its breaker
 * not closed, or an attempt in flight for over 5 s (it hangs). Only then do its runs count against its budget and its
 * deliveries get deferred: a healthy endpoint's runs go through in their first workflow task, paced by its pipeline
 * (HEALTHY_PIPELINE) and its company's bounds (OUTBOX_COMPANY_MAX_QUEUED, the start rate).
 */
export const IN_TROUBLE = (oldestInFlightMs: string) => `(e.failing_since is not null or e.circuit_state <> 'closed' or ${oldestInFlightMs} > ${IN_TROUBLE_AFTER_MS})`;

/** Whether one of an endpoint `e`'s deliveries has been delivered (FIRST_DELIVERY_PIPELINE until then). */
export const HAS_DELIVERED = `exists (select 1 from webhook_deliveries d where d.endpoint_id = e.id and d.status = 'delivered')`;

/**
 * Whether an endpoint `e` needs a run to probe with: its breaker is open and no run of its is held. The oldest held run
 * makes the probe after the cool-down; an endpoint whose budget is all runs waiting for their next retry (every run of a
 * new endpoint that never answered, whose budget is just what opens its breaker) would otherwise go unprobed until one of
 * those retries, up to hours away. Its budget is one run more then, its oldest deferred delivery's.
 */
export const PROBE_WANTED = `(e.circuit_state = 'open' and not exists (select 1 from webhook_deliveries d where d.endpoint_id = e.id and d.held_until is not null))`;

/** The runs at an endpoint `e`'s door (AT_THE_DOOR) or on their way there: started and not begun yet, or being started. */
export const BUSY_RUNS = `(${AT_THE_DOOR('e.id')} + (select count(*) from (${UNBEGUN('d.endpoint_id = e.id')}) u))::int`;

/**
 * The runs an endpoint `e` has that occupy it, by count, when `inTrouble` (an IN_TROUBLE): its BUSY_RUNS, those
 * waiting to retry, and those waiting for their record's earlier delivery (ordered per record: behind a retrying one,
 * a record's later changes would otherwise start a run each); 0 for a healthy one.
 */
export const OPEN_RUNS = (inTrouble: string) => `(
  case when ${inTrouble}
    then ${BUSY_RUNS}
       + (select count(*) from webhook_deliveries d where d.endpoint_id = e.id and d.status = 'retrying' and d.held_until is null and e.failing_since is not null)
       + (select count(*) from webhook_deliveries d where d.endpoint_id = e.id and d.held_until is not null and d.held_reason = 'awaiting_predecessor')
    else 0 end
)::int`;

/**
 * The runs an endpoint `e` in trouble may have that occupy it: of RunBudgets (the statement's parameters `perEndpoint`
 * and `beforeFirstDelivery`), by `delivered` (a HAS_DELIVERED). Both lanes take it from here: the claim lane as the
 * endpoint's `budget`, the deferred lane in DEFERRED_ROOM_COLUMNS.
 */
export const RUN_BUDGET = (delivered: string, perEndpoint: string, beforeFirstDelivery: string) =>
  `case when ${delivered} then ${perEndpoint}::int else ${beforeFirstDelivery}::int end`;

/**
 * What the deferred lane counts of an endpoint `e` (given `t.in_trouble`, an IN_TROUBLE, and `h.delivered`, a
 * HAS_DELIVERED), as columns: its OPEN_RUNS, its runs AT_THE_DOOR, its RUN_BUDGET (one run more while it wants a probe:
 * PROBE_WANTED), and its `first_room`: a healthy endpoint none of whose deliveries has been delivered has room for
 * `firstDeliveryPipeline` less its BUSY_RUNS, any other for `maxInFlight`.
 */
export const DEFERRED_ROOM_COLUMNS = (p: { perEndpoint: string; beforeFirstDelivery: string; maxInFlight: string; firstDeliveryPipeline: string }) =>
  `${OPEN_RUNS('t.in_trouble')} as open, ${AT_THE_DOOR('e.id')} as at_door,
            ${RUN_BUDGET('h.delivered', p.perEndpoint, p.beforeFirstDelivery)} + case when ${PROBE_WANTED} then 1 else 0 end as budget,
            case when t.in_trouble or h.delivered then ${p.maxInFlight} else ${p.firstDeliveryPipeline} - ${BUSY_RUNS} end as first_room`;

/**
 * How many of an endpoint `e`'s deferred deliveries (DEFERRED_ROOM_COLUMNS) may start now: as many as its budget has room
 * for and its free slots (`maxInFlight` attempts in flight at most, less the runs at its door), so that each is let
 * through in its run's first workflow task.
 */
export const DEFERRED_ROOM = (maxInFlight: string) => `greatest(0, least(e.budget - e.open, ${maxInFlight} - e.at_door, e.first_room))`;

/** What the claim lane reads of an endpoint to apply the rule: the statements' counts and flags (statements.ts, EndpointState). */
export interface EndpointRoom {
  /** Its runs that occupy it now (OPEN_RUNS: none while it is healthy). */
  open: number;
  /** RUN_BUDGET: the runs it may have that occupy it while in trouble. */
  budget: number;
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
}

/**
 * The runs an endpoint may get started now: a healthy one what its pipeline has room for (HEALTHY_PIPELINE per attempt it
 * may have in flight, `maxInFlight`, or FIRST_DELIVERY_PIPELINE before its first delivery; an event waiting in the
 * outbox costs nothing); one in trouble its budget's room; none behind deferred ones.
 */
export function roomOf(endpoint: EndpointRoom, maxInFlight: number): number {
  if (endpoint.deferring) return 0;
  if (!endpoint.in_trouble) {
    const pipeline = endpoint.has_delivered ? HEALTHY_PIPELINE * maxInFlight : FIRST_DELIVERY_PIPELINE;
    return Math.max(0, pipeline - endpoint.busy);
  }
  return Math.max(0, endpoint.budget - endpoint.open);
}

/** Whether its runs left it room within its budget when claimed: its deliveries deferred since may start before it says so. */
export const hadRoom = (endpoint: EndpointRoom | undefined): boolean => endpoint !== undefined && endpoint.open < endpoint.budget;

/**
 * Neither in trouble, stalled nor with deferred deliveries, and one of its deliveries has been delivered: its attempts
 * come back, and its runs go through as they start. What a new endpoint's one run leaves is deferred, not left waiting
 * in the outbox: until it answers, nothing says its room will come soon.
 */
export const isFlowing = (endpoint: EndpointRoom | undefined) =>
  endpoint !== undefined && !endpoint.in_trouble && !endpoint.stalled && !endpoint.deferring && endpoint.has_delivered;
