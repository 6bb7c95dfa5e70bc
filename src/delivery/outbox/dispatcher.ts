import type { EntityManager } from '@mikro-orm/postgresql';
import { Client as PgClient } from 'pg';
import type { Config, TransformationLimits } from '../../config';
import type { Orm } from '../../db/orm';
import { StatisticsRefresh } from '../../db/statistics-refresh';
import type { Logger } from '../../logger';
import type { WorkerMetrics } from '../../metrics';
import type { DeliveryToStart, DeliveryWorkflows } from '../delivery-workflows';
import { CompiledFilters } from '../endpoints/endpoint-filter';
import { CompiledTransformations } from '../endpoints/endpoint-transformation';
import { letGoForCompanies, moreToClaim, settleBatch, type BatchOutcome } from './batch';
import { CLAIM_SECONDS, type ClaimedBatch, claimDeferred, claimEvents, type ClaimLimits, ClaimNotices } from './claim';
import { hadRoom, isFlowing, runsPerEndpoint, type RunBudgets } from './endpoint-room';
import { fanOut, type FannedOut, writtenRow } from './fan-out';
import { appendToFeeds, FEED_HELD_RETRY_MS, transformedEntries } from './feeds';
import { Lane } from './lane';
import { RunStarts } from './run-starts';
import { type EndpointRow, uuids, WRITE_DELIVERIES } from './statements';

/**
 * The deliveries' statistics are refreshed once a dispatcher wrote this many since the last refresh, and a fifth of the
 * table: a company's burst to dead endpoints writes thousands of deferred deliveries a second, and the claims' plans
 * go wrong on the statistics of the table before it (src/db/statistics-refresh.ts).
 */
const STATISTICS_AFTER_ROWS = 1000;
const STATISTICS_AFTER_SHARE = 0.2;

export interface OutboxDispatcherOptions extends RunBudgets {
  orm: Orm;
  deliveryWorkflows: DeliveryWorkflows;
  databaseUrl: string;
  pollMs: number;
  logger: Logger;
  /** Attempts one endpoint may have in flight (WEBHOOK_ENDPOINT_MAX_IN_FLIGHT): deferred deliveries start into its free slots. */
  maxInFlightPerEndpoint: number;
  /** Deliveries started a second for one company at most (src/delivery/outbox/company-dispatch-rate.ts); absent: no limit. */
  companyStartsPerSecond?: number;
  /** Deliveries of one company waiting in Temporal's queue at most (src/delivery/outbox/company-queued-starts.ts); absent: no bound. */
  companyMaxQueued?: number;
  /** Bounds of a feed's transformation (WEBHOOK_TRANSFORMATION_TIMEOUT_MS, WEBHOOK_TRANSFORMATION_MAX_BYTES). */
  transformationLimits: TransformationLimits;
  /** Where events an endpoint's filter left out, and feeds' transformations, are counted; absent: not counted. */
  metrics?: DispatcherMetrics;
}

type DispatcherMetrics = Pick<WorkerMetrics, 'eventsFilteredOut' | 'transformations' | 'transformationDuration'>;

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
 * - A feed endpoint gets no delivery and no run: the batch's events are appended to its feed (feeds.ts), in
 *   their company's order, whatever room the webhook endpoints have.
 *
 * Nothing is lost or doubled if a process dies at any point: events and deferred deliveries are claimed for
 * CLAIM_SECONDS (replicas share the work, skipping what another holds), delivery ids are derived from (event, endpoint),
 * a delivery stays deferred until its run is known to be started, and a workflow id can be started once.
 *
 * Its work runs concurrently in these lanes, each a Lane (one pass at a time; an ask during a pass makes one more):
 * - the claim lane (`claims`): batches of events (dispatchNext) until the outbox holds no more for now. It is asked by
 *   a new event (outbox_events), an endpoint's room for waiting events (outbox_room, noted in `notices` for the next
 *   claim), a poll (`pollMs`, also noted: the next claim takes every endpoint's waiting events) and `resume`.
 * - the deferred lane (`deferred`): deferred deliveries whose endpoints have room (startDeferred), beside the claim lane
 *   so that new events never wait behind them. It is asked by an endpoint's room (endpoint_room), a poll, `resume`, and
 *   by the claim lane after a batch that deferred deliveries to an endpoint that had room.
 * - `starts`: each batch's runs are started after the batch before's, in a chain; dispatchNext waits for its own only
 *   when all go to flowing endpoints, otherwise the next batch is claimed and written meanwhile.
 * - `resume`: one timer at a time, asking both lanes once a company that sat out may start again or events a feed held
 *   back (`feedHeldBack`) may go; set when a lane has nothing left to do.
 * Invariants: every decision shared between lanes or replicas (claims, room, deferral, marks) is made in PostgreSQL
 * under row locks taken `skip locked`, so the lanes may overlap each other and other dispatchers; what this process
 * keeps (the companies' rate buckets, the notices) only paces it. A notice is taken by one claim; one that comes during
 * a claim is for the next. After `stop` no pass begins, and stop returns once both lanes and the starts are done.
 */
export class OutboxDispatcher {
  private listener: PgClient | null = null;
  private pollTimer: NodeJS.Timeout | null = null;
  private resumeTimer: NodeJS.Timeout | null = null;
  /** The last batch's runs being started (dispatchNext): the next batch starts its own once they are; never rejects. */
  private starts: Promise<void> = Promise.resolve();
  /** Events were held back from a feed behind another dispatcher's: claimed again in FEED_HELD_RETRY_MS. */
  private feedHeldBack = false;
  private stopped = false;
  private readonly claims: Lane;
  /** Wanted from the start, and whenever deferred deliveries may be startable. */
  private readonly deferred: Lane;
  private readonly notices = new ClaimNotices();
  private readonly runs: RunStarts;
  private readonly limits: ClaimLimits;
  private readonly filters = new CompiledFilters();
  private readonly transformations: CompiledTransformations;
  private readonly statistics: StatisticsRefresh;

  constructor(private readonly options: OutboxDispatcherOptions) {
    this.runs = new RunStarts(options);
    this.transformations = new CompiledTransformations(options.transformationLimits, options.metrics);
    this.limits = { ...options, countQueued: this.runs.countsQueued };
    this.statistics = new StatisticsRefresh({
      table: 'webhook_deliveries',
      em: () => this.em(),
      logger: options.logger,
      minRows: STATISTICS_AFTER_ROWS,
      share: STATISTICS_AFTER_SHARE,
    });
    const stopped = () => this.stopped;
    this.claims = new Lane(() => this.claimPass(), { stopped });
    this.deferred = new Lane(() => this.deferredPass(), { stopped, wanted: true, idle: () => this.resumeLater() });
  }

  /** Listens for new events and for endpoints making room (NOTIFY) and polls as a fallback, dispatching until stopped. */
  async start(): Promise<void> {
    await this.listen();
    this.pollTimer = setInterval(() => {
      this.notices.poll();
      this.kick(true);
    }, this.options.pollMs);
    this.kick(true);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.pollTimer) clearInterval(this.pollTimer);
    if (this.resumeTimer) clearTimeout(this.resumeTimer);
    await this.claims.settled();
    await this.starts;
    await this.deferred.settled();
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
    const claimed = await claimDeferred(em, this.limits);
    if (claimed.deliveries.length === 0) return 0;
    const now = this.runs.withinCompanyBounds(claimed.deliveries, claimed.queued);
    return this.runs.start(
      em,
      now,
      claimed.deliveries.filter((delivery) => !now.includes(delivery)),
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
    const sittingOut = this.runs.sittingOut();
    const claim = await claimEvents(em, this.limits, { sittingOut, ...this.notices.take() });
    if (claim.events.length === 0) return { dispatched: 0, more: this.cameBack(sittingOut) };
    const fanned = fanOut(claim.events, claim.endpoints, this.filters);
    // A fresh event's delivery to an endpoint that older events wait for outside the claim waits behind them.
    const behindWaiting = (delivery: DeliveryToStart) =>
      fanned.eventOf.get(delivery)!.waits_for === null && claim.endpointsById.get(delivery.input.endpointId)?.waited_for === true;
    const { fitting, now: startable } = this.runs.startable(fanned.deliveries, claim.endpointsById, claim.queued, behindWaiting);
    const letGo = letGoForCompanies(claim.events, fitting, startable);
    if (fanned.feedEntries.length) {
      const entries = await transformedEntries(fanned.feedEntries, claim.endpointsById, this.transformations);
      const held = await appendToFeeds(em, entries, claim.events);
      for (const eventId of held) letGo.add(eventId);
      if (held.length) this.feedHeldBack = true;
    }
    const batch = settleBatch(claim, fanned, { fitting, startable, letGo });
    if (batch.deferred.some((delivery) => hadRoom(claim.endpointsById.get(delivery.input.endpointId)))) this.deferred.want();
    await this.write(em, claim, fanned, batch);
    await this.startBatch(em, batch.now, claim.endpointsById);
    if (fanned.deliveries.length) this.options.logger.debug({ events: claim.events.length, deliveries: fanned.deliveries.length, started: batch.now.length }, 'outbox dispatched');
    return { dispatched: batch.dispatched.length, more: moreToClaim(claim.events, batch) || this.cameBack(sittingOut) };
  }

  /** Writes the batch (WRITE_DELIVERIES) and counts what it wrote and the events its filters left out. */
  private async write(em: EntityManager, claim: ClaimedBatch, fanned: FannedOut, batch: BatchOutcome): Promise<void> {
    await WRITE_DELIVERIES.run(em, {
      // First: the rows name their bodies, which `bodies` then holds.
      deliveries: JSON.stringify(
        batch.written.map((delivery) => writtenRow(delivery, fanned.eventOf.get(delivery)!, claim.endpointsById.get(delivery.input.endpointId)!, fanned.bodies)),
      ),
      startNow: uuids(batch.now.map((delivery) => delivery.input.deliveryId)),
      dispatched: uuids(batch.dispatched.map((event) => event.id)),
      claimSeconds: CLAIM_SECONDS,
      letGo: uuids(batch.letGo),
      waiting: JSON.stringify([...batch.waitsFor].map(([id, endpointIds]) => ({ id, waits_for: endpointIds }))),
      bodies: JSON.stringify(fanned.bodies.payloads),
    });
    this.statistics.noteWritten(batch.written.length);
    for (const event of batch.dispatched) for (const endpointId of fanned.filteredOut.get(event.id) ?? []) this.options.metrics?.eventsFilteredOut.inc({ endpoint_id: endpointId });
  }

  /**
   * Chains the batch's starts to the last batch's. Endpoints that answer go first: a company's new or troubled endpoints'
   * runs, started beside them, would hold up their first workflow tasks on the worker. A failure is logged here: the
   * next batch goes on, and a delivery whose start or marking failed keeps its claim, to be taken up again when it ends.
   */
  private async startBatch(em: EntityManager, now: DeliveryToStart[], endpoints: Map<string, EndpointRow>): Promise<void> {
    const flowing = (delivery: DeliveryToStart) => isFlowing(endpoints.get(delivery.input.endpointId));
    this.starts = this.starts
      .then(() => this.runs.start(em, now, [], flowing))
      .then(
        () => undefined,
        (error: unknown) => this.options.logger.error({ err: error }, `marking started runs failed; their deliveries are claimed again in ${CLAIM_SECONDS} s`),
      );
    if (now.length > 0 && now.every(flowing)) await this.starts;
  }

  /**
   * Whether a company that sat out of a claim (`satOut`) may take part already: its wait ended while the claim ran. The
   * timer that was to bring it back has fired then (a timer may fire a moment early), and none would be set again.
   */
  private cameBack(satOut: string[]): boolean {
    const stillOut = new Set(this.runs.sittingOut());
    return satOut.some((companyId) => !stillOut.has(companyId));
  }

  private em(): EntityManager {
    return this.options.orm.em.fork() as EntityManager;
  }

  /** Asks the claim lane for a pass; `deferred`: the deferred lane too (a poll, an endpoint's room, a resume). */
  private kick(deferred = false): void {
    if (deferred) this.deferred.ask();
    this.claims.ask();
  }

  /** Batches until the outbox holds no more for now (events committed meanwhile ask again), then what comes after. */
  private async claimPass(): Promise<void> {
    try {
      let more = true;
      while (!this.stopped && more) ({ more } = await this.dispatchNext());
    } catch (error) {
      this.options.logger.error({ err: error }, 'outbox dispatch failed; retrying at the next poll');
    }
    // Companies that sat out come back as soon as they may start more, not at the next poll.
    this.resumeLater();
    this.deferred.askIfWanted();
  }

  private async deferredPass(): Promise<void> {
    try {
      await this.startDeferred();
    } catch (error) {
      this.options.logger.error({ err: error }, 'starting deferred deliveries failed; retrying at the next poll');
    }
  }

  /**
   * Kicks again, for its events and deferred deliveries, once a company that sat out may start deliveries, or events held
   * back from a feed may go (sooner than the next poll).
   */
  private resumeLater(): void {
    const waits = [this.runs.msUntilNext(), this.feedHeldBack ? FEED_HELD_RETRY_MS : undefined].filter((ms) => typeof ms === 'number');
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
      if (message.channel === 'endpoint_room') return this.deferred.ask();
      if (message.channel === 'outbox_room' && message.payload) this.notices.roomAt(message.payload);
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

/** Starts a dispatcher configured from the service settings. */
export async function startOutboxDispatcher(deps: {
  config: Config;
  orm: Orm;
  deliveryWorkflows: DeliveryWorkflows;
  logger: Logger;
  metrics?: DispatcherMetrics;
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
    transformationLimits: deps.config.webhooks.transformation,
    metrics: deps.metrics,
  });
  await dispatcher.start();
  return dispatcher;
}
