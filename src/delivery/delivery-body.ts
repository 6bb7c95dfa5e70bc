import { eventDefinition } from '../events/registry';

/** The two shapes of an event's envelope an endpoint chooses between (docs: shape A and shape B). */
export type PayloadShape = 'A' | 'B';

export interface StoredEvent {
  id: string;
  companyId: string;
  /** The registry key. */
  eventType: string;
  occurredAt: Date;
  data: Record<string, unknown> | null;
  catalogData: Record<string, unknown> | null;
}

/** What one endpoint is sent for an event: the X-Webhook-Event value and the exact body bytes. */
export interface DeliveryBody {
  eventType: string;
  payload: string;
}

/** What one endpoint is sent for an event, before it is written out: the X-Webhook-Event value and the body. */
export interface DeliveryEnvelope {
  eventType: string;
  body: Record<string, unknown>;
}

/**
 * Shape B (catalog): event, timestamp, data, when the catalog describes the event. Otherwise shape A
 * (detailed): event_id, event_type, timestamp, company_id, data. An event only the catalog describes (po.*)
 * goes to shape A endpoints in the shape A envelope with its catalog data and name; one the catalog does
 * not describe (customer.*) or delivers in shape A (project.closed) goes to shape B endpoints in shape A.
 */
export function deliveryEnvelope(event: StoredEvent, shape: PayloadShape): DeliveryEnvelope {
  const definition = eventDefinition(event.eventType);
  const timestamp = event.occurredAt.toISOString();
  if (shape === 'B' && definition.shapeB && event.catalogData) {
    return { eventType: definition.shapeB, body: { event: definition.shapeB, timestamp, data: event.catalogData } };
  }
  const name = definition.shapeA ?? definition.shapeB!;
  const data = event.data ?? event.catalogData;
  return { eventType: name, body: { event_id: event.id, event_type: name, timestamp, company_id: event.companyId, data } };
}

/** The envelope of deliveryEnvelope, written out. */
export function deliveryBody(event: StoredEvent, shape: PayloadShape): DeliveryBody {
  const { eventType, body } = deliveryEnvelope(event, shape);
  return { eventType, payload: JSON.stringify(body) };
}

export const TEST_EVENT_TYPE = 'webhook.test';

/** The body of a test delivery, in the endpoint's shape. */
export function testDeliveryBody(input: { deliveryId: string; companyId: string; endpointId: string; shape: PayloadShape }): DeliveryBody {
  const timestamp = new Date().toISOString();
  const data = { message: 'Test delivery: your endpoint is reachable and can verify our signature.', endpoint_id: input.endpointId };
  const body =
    input.shape === 'B'
      ? { event: TEST_EVENT_TYPE, timestamp, data }
      : { event_id: input.deliveryId, event_type: TEST_EVENT_TYPE, timestamp, company_id: input.companyId, data };
  return { eventType: TEST_EVENT_TYPE, payload: JSON.stringify(body) };
}
