import { v5 as uuidv5 } from 'uuid';
import { endpointAbout } from '../../events/registry';
import { deliveryBody, deliveryEnvelope, type DeliveryEnvelope, type PayloadShape, type StoredEvent } from '../delivery-body';
import type { DeliveryToStart } from '../delivery-workflows';
import type { CompiledFilters } from '../endpoints/endpoint-filter';
import { isSubscribed } from '../endpoints/subscriptions';
import type { DeferredRow, EndpointRow, EventRow } from './statements';

/*
 * Fan-out: who gets a claimed event (recipients, echo prevention, content filters), its bodies, and the rows written for
 * it: a delivery per webhook endpoint (WRITE_DELIVERIES), an entry per feed (APPEND_FEED_EVENTS).
 */

/** Namespace of the delivery ids derived from (event, endpoint): the same pair always gets the same id. */
const DELIVERY_ID_NAMESPACE = '6f0b0b8e-6c2e-4a53-9a41-52a3bb2f6e6d';

export const deliveryIdFor = (eventId: string, endpointId: string) => uuidv5(`${eventId}/${endpointId}`, DELIVERY_ID_NAMESPACE);

/** A claimed event: its age, and the endpoints it has deliveries for already (it was dispatched in part). */
export type ClaimedEvent = EventRow & { age_ms: number; written_to: string[] };

/** What a batch's events fan out to. */
export interface FannedOut {
  /** The deliveries to write or leave waiting, in event order. */
  deliveries: DeliveryToStart[];
  eventOf: Map<DeliveryToStart, ClaimedEvent>;
  /** The endpoints each event's filter left out, counted once the event is dispatched (one that waits comes back). */
  filteredOut: Map<string, string[]>;
  /** A feed's events are written to it, whatever room webhook endpoints have: a feed takes no run. */
  feedEntries: Record<string, unknown>[];
  bodies: BatchBodies;
}

/** The deliveries and feed entries of a batch's events; an event partly dispatched before has the rest of its deliveries to write. */
export function fanOut(events: ClaimedEvent[], endpoints: EndpointRow[], filters: CompiledFilters): FannedOut {
  const out: FannedOut = { deliveries: [], eventOf: new Map(), filteredOut: new Map(), feedEntries: [], bodies: new BatchBodies() };
  for (const event of events) {
    const written = new Set(event.written_to);
    for (const endpoint of recipientsOf(event, endpoints)) {
      if (endpoint.delivery === 'webhook' && written.has(endpoint.id)) continue;
      // A feed's filter too: an event it leaves out is not in the feed.
      if (!passesFilter(filters, event, endpoint, out.bodies)) {
        out.filteredOut.set(event.id, [...(out.filteredOut.get(event.id) ?? []), endpoint.id]);
        continue;
      }
      if (endpoint.delivery === 'feed') {
        out.feedEntries.push(feedEntry(event, endpoint));
        continue;
      }
      const delivery = toStart(
        { id: deliveryIdFor(event.id, endpoint.id), company_id: event.company_id, endpoint_id: endpoint.id, event_id: event.id, event_type: event.event_type, traceparent: event.traceparent, tracestate: event.tracestate },
        endpoint.url,
      );
      out.deliveries.push(delivery);
      out.eventOf.set(delivery, event);
    }
  }
  return out;
}

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

/** Whether the event's body, as the endpoint would be sent it (made once per shape of the event: `bodies`), matches the endpoint's filter. */
function passesFilter(filters: CompiledFilters, event: EventRow, endpoint: EndpointRow, bodies: BatchBodies): boolean {
  if (endpoint.filter === null) return true;
  return filters.of(endpoint.id, endpoint.updated_at, endpoint.filter)(bodies.envelope(event, endpoint.payload_shape).body);
}

/** The row of a feed's entry as append_feed_events takes it: the body its webhook would carry, and its X-Webhook-ID. */
function feedEntry(event: EventRow, endpoint: EndpointRow): Record<string, unknown> {
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
 * The row of a delivery as WRITE_DELIVERIES takes it, naming its body in its endpoint's shape among the batch's
 * `bodies`; the delivery's run takes the event type that body names. Made only for the deliveries written: those that
 * wait cost no body.
 */
export function writtenRow(delivery: DeliveryToStart, event: EventRow, endpoint: EndpointRow, bodies: BatchBodies): Record<string, unknown> {
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

export function toStart(row: Omit<DeferredRow, 'url'>, url: string): DeliveryToStart {
  return {
    input: { deliveryId: row.id, companyId: row.company_id, endpointId: row.endpoint_id, eventType: row.event_type },
    endpointUrl: url,
    eventId: row.event_id,
    trace: row.traceparent ? { traceparent: row.traceparent, tracestate: row.tracestate } : null,
  };
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
export class BatchBodies {
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
