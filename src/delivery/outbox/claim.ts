import type { EntityManager } from '@mikro-orm/postgresql';
import type { DeliveryToStart } from '../delivery-workflows';
import { FIRST_DELIVERY_PIPELINE, HEALTHY_PIPELINE, type RunBudgets } from './endpoint-room';
import { type ClaimedEvent, toStart } from './fan-out';
import { CLAIM_DEFERRED, CLAIM_EVENTS, type EndpointRow, type QueuedRow, uuids } from './statements';

/*
 * Claiming: a batch of outbox events with their companies' endpoints (CLAIM_EVENTS), or deferred deliveries whose
 * endpoints have room (CLAIM_DEFERRED), held by this dispatcher for CLAIM_SECONDS.
 */

export const BATCH_SIZE = 100;
/**
 * Events of one company in one batch at most while many companies wait (the batch's share of each, when fewer do): a
 * company's burst cannot keep another's events waiting behind it, and a company alone fans out a whole batch at once.
 */
export const EVENTS_PER_COMPANY = 20;
/**
 * How long a dispatcher holds what it claimed (events to write deliveries of, deliveries to start the runs of): past
 * it, another dispatcher takes them (this one died), and finds what was done already (delivery ids are derived, a run
 * id is started once).
 */
export const CLAIM_SECONDS = 30;

/** What both claims are given: the endpoints' budgets and slots, and whether to count each company's queued runs. */
export type ClaimLimits = RunBudgets & { maxInFlightPerEndpoint: number; countQueued: boolean };

export interface ClaimedBatch {
  events: ClaimedEvent[];
  /** The active endpoints of the events' companies, with their runs counted (statements.ts, EndpointState). */
  endpoints: EndpointRow[];
  endpointsById: Map<string, EndpointRow>;
  /** Each company's deliveries waiting in Temporal's queue, when counted. */
  queued: Map<string, number>;
}

/**
 * What the next claim of events is told, each notice taken by one claim: the endpoints that said they have room
 * (outbox_room), whose waiting events it takes first, and whether a poll came (it takes the waiting events of every
 * endpoint they wait for).
 */
export class ClaimNotices {
  private readonly roomMade = new Set<string>();
  private pollDue = false;

  roomAt(endpointId: string): void {
    this.roomMade.add(endpointId);
  }

  poll(): void {
    this.pollDue = true;
  }

  take(): { roomMade: string[]; poll: boolean } {
    const taken = { roomMade: [...this.roomMade], poll: this.pollDue };
    this.roomMade.clear();
    this.pollDue = false;
    return taken;
  }
}

/** Claims the next batch of events, but for the companies `sittingOut` (their bounds reached). */
export async function claimEvents(em: EntityManager, limits: ClaimLimits, ask: { sittingOut: string[]; roomMade: string[]; poll: boolean }): Promise<ClaimedBatch> {
  const [claim] = await CLAIM_EVENTS.run(em, {
    eventsPerCompany: EVENTS_PER_COMPANY,
    batchSize: BATCH_SIZE,
    claimSeconds: CLAIM_SECONDS,
    countQueued: limits.countQueued,
    sittingOut: uuids(ask.sittingOut),
    pipeline: HEALTHY_PIPELINE * limits.maxInFlightPerEndpoint,
    roomMade: uuids(ask.roomMade),
    poll: ask.poll,
    runsPerEndpoint: limits.maxRunsPerEndpoint,
    runsBeforeFirstDelivery: limits.maxRunsBeforeFirstDelivery,
  });
  return {
    events: claim!.events.map((event) => ({ ...event, created_at: new Date(event.created_at) })),
    endpoints: claim!.endpoints,
    endpointsById: new Map(claim!.endpoints.map((endpoint) => [endpoint.id, endpoint])),
    queued: queuedByCompany(claim!.queued),
  };
}

/** Claims the deferred deliveries whose endpoints have room, oldest first, as their runs to start. */
export async function claimDeferred(em: EntityManager, limits: ClaimLimits): Promise<{ deliveries: DeliveryToStart[]; queued: Map<string, number> }> {
  const [claim] = await CLAIM_DEFERRED.run(em, {
    runsPerEndpoint: limits.maxRunsPerEndpoint,
    claimSeconds: CLAIM_SECONDS,
    countQueued: limits.countQueued,
    maxInFlight: limits.maxInFlightPerEndpoint,
    firstDeliveryPipeline: FIRST_DELIVERY_PIPELINE,
    runsBeforeFirstDelivery: limits.maxRunsBeforeFirstDelivery,
  });
  return { deliveries: claim!.deliveries.map((row) => toStart(row, row.url)), queued: queuedByCompany(claim!.queued) };
}

const queuedByCompany = (rows: QueuedRow[]) => new Map(rows.map((row) => [row.company_id, row.queued]));
