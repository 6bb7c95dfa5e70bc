import type { EntityManager } from '@mikro-orm/postgresql';
import { Client as PgClient } from 'pg';
import { v5 as uuidv5 } from 'uuid';
import type { Config } from '../config';
import type { Orm } from '../db/orm';
import { PreparedStatement } from '../db/prepared-statement';
import { isSubscribed } from './subscriptions';
import type { PayloadShape } from './webhook-endpoint.entity';
import type { Logger } from '../logger';
import type { DeliveryToStart, DeliveryWorkflows } from '../temporal/delivery-workflows';
import { deliveryBody } from './delivery-body';
import { CompanyDispatchRate } from './company-dispatch-rate';
import { CompanyQueuedStarts } from './company-queued-starts';

/** Namespace of the delivery ids derived from (event, endpoint): the same pair always gets the same id. */
const DELIVERY_ID_NAMESPACE = '6f0b0b8e-6c2e-4a53-9a41-52a3bb2f6e6d';
const BATCH_SIZE = 100;
/** Events of one company in one batch at most: a company's burst cannot keep another's events waiting behind it. */
const EVENTS_PER_COMPANY = 20;
const STARTS_IN_PARALLEL = 16;
/**
 * How long a dispatcher holds the events it claimed while it writes their deliveries and starts their runs: past it,
 * another dispatcher takes them (this one died), writes the same deliveries (kept, as their ids are derived) and finds
 * their runs started.
 */
const CLAIM_SECONDS = 30;

/**
 * Claims the next batch in one statement: each company with waiting events (found by a loose index scan), its oldest
 * EVENTS_PER_COMPANY, taken in turns (every company's first event, then every company's second, and so on; a company's
 * events stay in order), skipping those another dispatcher holds; with the claimed events, their companies' active
 * endpoints and (when $5) each company's deliveries waiting in Temporal's queue (started within the last two minutes,
 * an older one's run is gone or the workers are down, and not yet begun: neither held, admitted nor attempted).
 */
const CLAIM = new PreparedStatement<{ events: (Omit<EventRow, 'created_at'> & { created_at: string })[]; endpoints: EndpointRow[]; queued: { company_id: string; queued: number }[] }>(
  'claim_outbox_events',
  `with recursive companies(company_id) as (
     (select company_id from outbox_events where dispatched_at is null order by company_id limit 1)
     union all
     select (select o.company_id from outbox_events o where o.dispatched_at is null and o.company_id > c.company_id order by o.company_id limit 1)
       from companies c where c.company_id is not null
   ), turns as (
     select waiting.id, row_number() over (partition by c.company_id order by waiting.created_at, waiting.id) as turn
       from companies c
       cross join lateral (
         select o.id, o.created_at from outbox_events o
          where o.dispatched_at is null and o.company_id = c.company_id and (o.claimed_until is null or o.claimed_until < now())
          order by o.created_at, o.id limit $1
       ) waiting
      where c.company_id <> all($2::uuid[])
   ), picked as (
     select o.id from outbox_events o join turns t on t.id = o.id
      where o.dispatched_at is null and (o.claimed_until is null or o.claimed_until < now())
      order by t.turn, o.created_at, o.id limit $3 for update of o skip locked
   ), claimed as (
     update outbox_events o set claimed_until = now() + $4 * interval '1 second' from picked where o.id = picked.id
     returning o.id, o.company_id, o.event_type, o.data, o.catalog_data, o.origin_api_key_id, o.created_at, o.traceparent, o.tracestate
   )
   select
     (select coalesce(json_agg(c order by c.created_at, c.id), '[]') from claimed c) as events,
     (select coalesce(json_agg(e), '[]') from (
        select id, company_id, api_key_id, url, event_types, payload_shape from webhook_endpoints
         where status = 'active' and company_id in (select company_id from claimed)) e) as endpoints,
     (select coalesce(json_agg(q), '[]') from (
        select d.company_id, count(*)::int as queued from webhook_deliveries d
         where $5 and d.company_id in (select company_id from claimed)
           and d.status = 'pending' and d.held_until is null and not d.is_test and d.created_at > now() - interval '2 minutes'
           and not exists (select 1 from webhook_endpoint_slots s where s.endpoint_id = d.endpoint_id and s.delivery_id = d.id)
           and not exists (select 1 from webhook_delivery_attempts a where a.delivery_id = d.id)
         group by d.company_id) q) as queued`,
);

/**
 * Writes deliveries ($1, a JSON array) and lets go of the claimed events not taken ($2), in one statement. A
 * microsecond apart in event order: an endpoint's deliveries are ordered by created_at (held ones are let through
 * oldest first), and one statement's now() would leave a batch's in the random order of their ids.
 */
const WRITE_DELIVERIES = new PreparedStatement(
  'write_outbox_deliveries',
  `with let_go as (update outbox_events set claimed_until = null where id = any($2::uuid[]))
   insert into webhook_deliveries (id, company_id, endpoint_id, event_id, event_type, payload, traceparent, tracestate, created_at, updated_at)
   select d.id, d.company_id, d.endpoint_id, d.event_id, d.event_type, d.payload, d.traceparent, d.tracestate, now() + (d.n - 1) * interval '1 microsecond', now()
     from rows from (json_to_recordset($1::json) as (id uuid, company_id uuid, endpoint_id uuid, event_id uuid, event_type text, payload text, traceparent text, tracestate text))
          with ordinality as d(id, company_id, endpoint_id, event_id, event_type, payload, traceparent, tracestate, n)
   on conflict (event_id, endpoint_id) do nothing`,
);

export const deliveryIdFor = (eventId: string, endpointId: string) => uuidv5(`${eventId}/${endpointId}`, DELIVERY_ID_NAMESPACE);

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
}

interface EndpointRow {
  id: string;
  company_id: string;
  api_key_id: string | null;
  url: string;
  event_types: string[];
  payload_shape: PayloadShape;
}

export interface OutboxDispatcherOptions {
  orm: Orm;
  deliveryWorkflows: DeliveryWorkflows;
  databaseUrl: string;
  pollMs: number;
  logger: Logger;
  /** Deliveries started a second for one company at most (src/delivery/company-dispatch-rate.ts); absent: no limit. */
  companyStartsPerSecond?: number;
  /** Deliveries of one company waiting in Temporal's queue at most (src/delivery/company-queued-starts.ts); absent: no bound. */
  companyMaxQueued?: number;
}

/**
 * Turns outbox events into deliveries: one per active endpoint subscribed to the event, except the endpoints
 * of the API key that made the change (echo prevention), each with its delivery workflow.
 *
 * Nothing is lost or doubled if a process dies at any point: events are claimed with FOR UPDATE SKIP LOCKED
 * (replicas share the work), delivery ids are derived from (event, endpoint), workflows are started before
 * the claim commits, and a workflow id can be started once. A crash before the commit leaves the event
 * unclaimed; the next run recreates the same deliveries and finds their workflows already started.
 *
 * Companies take turns: a batch holds at most EVENTS_PER_COMPANY events of each, first events first, so one
 * company's burst delays another's events by one batch at most; a company's deliveries are started at
 * OUTBOX_COMPANY_STARTS_PER_SECOND at most while others dispatch too, and no more of them are started while
 * OUTBOX_COMPANY_MAX_QUEUED wait in Temporal's queue, so its burst does not crowd the Temporal server or its queue either.
 */
export class OutboxDispatcher {
  private listener: PgClient | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** The kick for companies that sat out a batch, when they may start deliveries again. */
  private resumeTimer: NodeJS.Timeout | null = null;
  private readonly rate: CompanyDispatchRate | null;
  private readonly queue: CompanyQueuedStarts | null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(private readonly options: OutboxDispatcherOptions) {
    this.rate = options.companyStartsPerSecond ? new CompanyDispatchRate(options.companyStartsPerSecond) : null;
    this.queue = options.companyMaxQueued ? new CompanyQueuedStarts(options.companyMaxQueued) : null;
  }

  /** Listens for new events (NOTIFY at commit) and polls as a fallback, dispatching until stopped. */
  async start(): Promise<void> {
    await this.listen();
    this.timer = setInterval(() => this.kick(), this.options.pollMs);
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.resumeTimer) clearTimeout(this.resumeTimer);
    await this.running;
    await this.listener?.end().catch(() => undefined);
  }

  /** Dispatches one batch of undispatched events; returns how many were dispatched. */
  async dispatchBatch(): Promise<number> {
    return (await this.dispatchNext()).dispatched;
  }

  /**
   * One batch; `more`: the outbox may hold more for a next batch now (the batch was full, or a company filled its turns
   * and dispatched them). Events a company's bounds left are not: the company sits out until resumeLater.
   */
  private async dispatchNext(): Promise<{ dispatched: number; more: boolean }> {
    const em = this.options.orm.em.fork() as EntityManager;
    const sittingOut = [...(this.rate?.exhausted() ?? []), ...(this.queue?.full() ?? [])];
    const [claim] = await CLAIM.rows(em, [EVENTS_PER_COMPANY, `{${sittingOut.join(',')}}`, BATCH_SIZE, CLAIM_SECONDS, this.queue !== null]);
    const events = claim!.events.map((event) => ({ ...event, created_at: new Date(event.created_at) }));
    if (events.length === 0) return { dispatched: 0, more: false };
    const recipients = new Map(events.map((event) => [event, recipientsOf(event, claim!.endpoints)]));
    // Events beyond a company's bounds are let go at once, for a later batch.
    const queued = new Map(claim!.queued.map((row) => [row.company_id, row.queued]));
    const taken = this.rate || this.queue ? this.withinBounds(events, recipients, queued) : events;
    const deliveries = await this.createDeliveries(
      em,
      taken,
      recipients,
      events.filter((event) => !taken.includes(event)).map((event) => event.id),
    );
    await runInParallel(deliveries, STARTS_IN_PARALLEL, (d) => this.options.deliveryWorkflows.start(d));
    await em.execute('update outbox_events set dispatched_at = now(), claimed_until = null where id in (select json_array_elements_text(?::json)::uuid)', [
      JSON.stringify(taken.map((e) => e.id)),
    ]);
    if (deliveries.length) this.options.logger.debug({ events: taken.length, deliveries: deliveries.length }, 'outbox dispatched');
    const perCompany = new Map<string, number>();
    for (const event of events) perCompany.set(event.company_id, (perCompany.get(event.company_id) ?? 0) + 1);
    const full = events.length === BATCH_SIZE || [...perCompany.values()].some((count) => count === EVENTS_PER_COMPANY);
    return { dispatched: taken.length, more: full && taken.length > 0 };
  }

  /**
   * Writes the deliveries of the events taken, committed before their runs start (a run's first task finds its
   * delivery), and lets go of the events not taken, in one statement. Returns the runs to start.
   */
  private async createDeliveries(em: EntityManager, events: EventRow[], recipients: Map<EventRow, EndpointRow[]>, letGo: string[]): Promise<DeliveryToStart[]> {
    const rows: Record<string, unknown>[] = [];
    const toStart: DeliveryToStart[] = [];
    for (const event of events) {
      for (const endpoint of recipients.get(event)!) {
        const id = deliveryIdFor(event.id, endpoint.id);
        const body = deliveryBody(
          { id: event.id, companyId: event.company_id, eventType: event.event_type, occurredAt: event.created_at, data: event.data, catalogData: event.catalog_data },
          endpoint.payload_shape,
        );
        rows.push({
          id,
          company_id: event.company_id,
          endpoint_id: endpoint.id,
          event_id: event.id,
          event_type: body.eventType,
          payload: body.payload,
          traceparent: event.traceparent,
          tracestate: event.tracestate,
        });
        toStart.push({
          input: { deliveryId: id, companyId: event.company_id, endpointId: endpoint.id, eventType: body.eventType },
          endpointUrl: endpoint.url,
          eventId: event.id,
          trace: event.traceparent ? { traceparent: event.traceparent, tracestate: event.tracestate } : null,
        });
      }
    }
    if (rows.length || letGo.length) await WRITE_DELIVERIES.rows(em, [JSON.stringify(rows), `{${letGo.join(',')}}`]);
    return toStart;
  }

  /**
   * The events, in their order, that each company's bounds let through now: the first of each company's, as many as
   * fit beside its deliveries queued in Temporal, and of those as many as its rate admits.
   */
  private withinBounds(events: EventRow[], recipients: Map<EventRow, EndpointRow[]>, queued: Map<string, number>): EventRow[] {
    const byCompany = new Map<string, EventRow[]>();
    for (const event of events) {
      const own = byCompany.get(event.company_id);
      if (own) own.push(event);
      else byCompany.set(event.company_id, [event]);
    }
    this.rate?.noteActive(byCompany.keys());
    const taken = new Set<EventRow>();
    for (const [companyId, own] of byCompany) {
      let next = own.map((event) => recipients.get(event)!.length);
      if (this.queue) next = next.slice(0, this.queue.admit(companyId, queued.get(companyId) ?? 0, next));
      if (this.rate) next = next.slice(0, this.rate.admit(companyId, next));
      for (const event of own.slice(0, next.length)) taken.add(event);
    }
    return events.filter((event) => taken.has(event));
  }

  /** Runs batches until the outbox is drained; a kick while running schedules one more pass. */
  private kick(): void {
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
      } while (this.again && !this.stopped);
      this.resumeLater();
    })().finally(() => {
      this.running = null;
    });
  }

  /** Kicks again once a company that sat out may start deliveries, if one did (sooner than the next poll). */
  private resumeLater(): void {
    const waits = [this.rate?.msUntilNext(), this.queue?.msUntilNext()].filter((ms) => typeof ms === 'number');
    if (waits.length === 0 || this.stopped || this.resumeTimer) return;
    const ms = Math.min(...waits);
    this.resumeTimer = setTimeout(() => {
      this.resumeTimer = null;
      this.kick();
    }, ms);
  }

  private async listen(): Promise<void> {
    const listener = new PgClient({ connectionString: this.options.databaseUrl });
    listener.on('notification', () => this.kick());
    listener.on('error', (error) => {
      this.options.logger.warn({ err: error }, 'outbox listener lost its connection; polling until it is back');
      this.listener = null;
      listener.end().catch(() => undefined);
      this.relisten();
    });
    await listener.connect();
    await listener.query('listen outbox_events');
    this.listener = listener;
  }

  private relisten(): void {
    if (this.stopped) return;
    setTimeout(() => this.listen().catch(() => this.relisten()), 1000);
  }
}

/** The endpoints an event goes to: the company's active ones subscribed to it, except those of the API key that made it (echo prevention). */
function recipientsOf(event: EventRow, endpoints: EndpointRow[]): EndpointRow[] {
  return endpoints.filter(
    (endpoint) =>
      endpoint.company_id === event.company_id &&
      isSubscribed(endpoint.event_types, event.event_type) &&
      !(endpoint.api_key_id !== null && endpoint.api_key_id === event.origin_api_key_id),
  );
}

async function runInParallel<T>(items: T[], limit: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!);
  });
  await Promise.all(lanes);
}

/** Starts a dispatcher configured from the service settings. */
export async function startOutboxDispatcher(deps: { config: Config; orm: Orm; deliveryWorkflows: DeliveryWorkflows; logger: Logger }): Promise<OutboxDispatcher> {
  const dispatcher = new OutboxDispatcher({
    orm: deps.orm,
    deliveryWorkflows: deps.deliveryWorkflows,
    databaseUrl: deps.config.databaseUrl,
    pollMs: deps.config.outboxPollMs,
    logger: deps.logger,
    companyStartsPerSecond: deps.config.outboxCompanyStartsPerSecond || undefined,
    companyMaxQueued: deps.config.outboxCompanyMaxQueued || undefined,
  });
  await dispatcher.start();
  return dispatcher;
}
