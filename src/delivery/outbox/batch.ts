import type { DeliveryToStart } from '../delivery-workflows';
import { BATCH_SIZE, type ClaimedBatch, EVENTS_PER_COMPANY } from './claim';
import { isFlowing } from './endpoint-room';
import type { ClaimedEvent, FannedOut } from './fan-out';

/*
 * What a batch does with each of its events and deliveries once their endpoints' room and their companies' bounds are
 * known: an event is dispatched, left waiting for an endpoint's room, or let go (claimed again later); a delivery is
 * written, started now or deferred, or waits in the outbox with its event.
 */

/** How long a healthy endpoint's delivery may wait in the outbox for its room before it is written deferred. */
const HEALTHY_WAIT_MS = 10_000;

export interface BatchOutcome {
  /** The deliveries written (WRITE_DELIVERIES), each deferred until its run is started. */
  written: DeliveryToStart[];
  /** Of those, the ones whose runs start now. */
  now: DeliveryToStart[];
  /** Written and not started: they start as their endpoints make room. */
  deferred: DeliveryToStart[];
  dispatched: ClaimedEvent[];
  /** Events let go as they were: their companies' bounds left them, or a feed held them back. */
  letGo: Set<string>;
  /** Events left waiting in the outbox, with the endpoints whose room they wait for. */
  waitsFor: Map<string, string[]>;
}

/**
 * The events let go for their companies' bounds: deliveries the bounds left, though their endpoints had room (`fitting`
 * but not `startable`). From the first event with one, the company's events stay in the outbox and it sits out until it
 * may start more (a deferred delivery would cost a claim and a hold each; an event waiting costs nothing).
 */
export function letGoForCompanies(events: ClaimedEvent[], fitting: DeliveryToStart[], startable: DeliveryToStart[]): Set<string> {
  const chosen = new Set(startable);
  const leftByCompany = new Set(fitting.filter((delivery) => !chosen.has(delivery)).map((delivery) => delivery.eventId));
  const sittingOutNow = new Set<string>();
  const letGo = new Set<string>();
  for (const event of events) {
    if (!sittingOutNow.has(event.company_id) && !leftByCompany.has(event.id)) continue;
    sittingOutNow.add(event.company_id);
    letGo.add(event.id);
  }
  return letGo;
}

/**
 * The batch's outcome. A flowing endpoint's deliveries it has no room for wait in the outbox with their events (its
 * other deliveries are written), until it says it has room; those of an event waiting over HEALTHY_WAIT_MS are deferred
 * instead, so that a slow endpoint's backlog cannot fill its company's claims.
 */
export function settleBatch(
  claim: ClaimedBatch,
  { deliveries, eventOf }: FannedOut,
  { fitting, startable, letGo }: { fitting: DeliveryToStart[]; startable: DeliveryToStart[]; letGo: Set<string> },
): BatchOutcome {
  const fits = new Set(fitting);
  const chosen = new Set(startable);
  const waiting = deliveries.filter(
    (delivery) =>
      !fits.has(delivery) && !letGo.has(delivery.eventId!) && isFlowing(claim.endpointsById.get(delivery.input.endpointId)) && eventOf.get(delivery)!.age_ms < HEALTHY_WAIT_MS,
  );
  const waitsFor = new Map<string, string[]>();
  for (const delivery of waiting) waitsFor.set(delivery.eventId!, [...(waitsFor.get(delivery.eventId!) ?? []), delivery.input.endpointId]);
  const waits = new Set(waiting);
  const written = deliveries.filter((delivery) => !letGo.has(delivery.eventId!) && !waits.has(delivery));
  return {
    written,
    now: startable.filter((delivery) => !letGo.has(delivery.eventId!)),
    // Deliveries left for lack of room start as their endpoints make room (which they say); only those left behind
    // older deferred ones may be startable before that.
    deferred: written.filter((delivery) => !chosen.has(delivery)),
    dispatched: claim.events.filter((event) => !letGo.has(event.id) && !waitsFor.has(event.id)),
    letGo,
    waitsFor,
  };
}

/**
 * Whether the outbox may hold more for a next batch now: the batch was full, or a company filled its turns of fresh
 * events (the waiting ones come back with their endpoints' room). A batch that wrote nothing and left no fresh event
 * waiting found only events waiting for room: the next comes with room, a new event or a poll.
 */
export function moreToClaim(events: ClaimedEvent[], { written, dispatched, waitsFor }: BatchOutcome): boolean {
  const freshOf = new Map<string, number>();
  for (const event of events) if (event.waits_for === null) freshOf.set(event.company_id, (freshOf.get(event.company_id) ?? 0) + 1);
  const progressed = written.length > 0 || dispatched.length > 0 || events.some((event) => event.waits_for === null && waitsFor.has(event.id));
  return progressed && (events.length === BATCH_SIZE || [...freshOf.values()].some((count) => count >= EVENTS_PER_COMPANY));
}
