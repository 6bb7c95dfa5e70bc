import type { PayloadShape } from '../domain/webhooks/webhook-endpoint.entity';
import { catalogEventName, type EventType } from './catalog';

export interface StoredEvent {
  id: string;
  companyId: string;
  eventType: EventType;
  occurredAt: Date;
  data: Record<string, unknown>;
  catalogData: Record<string, unknown> | null;
}

/** What one endpoint is sent for an event: the X-Webhook-Event value and the exact body bytes. */
export interface DeliveryBody {
  eventType: string;
  payload: string;
}

/**
 * Shape A (detailed): event_id, event_type, timestamp, company_id, data. Shape B (catalog): event,
 * timestamp, data, with workorder.* / po.* names; events the catalog does not describe go out in shape A.
 */
export function deliveryBody(event: StoredEvent, shape: PayloadShape): DeliveryBody {
  const timestamp = event.occurredAt.toISOString();
  if (shape === 'B' && event.catalogData) {
    const name = catalogEventName(event.eventType);
    return { eventType: name, payload: JSON.stringify({ event: name, timestamp, data: event.catalogData }) };
  }
  return {
    eventType: event.eventType,
    payload: JSON.stringify({ event_id: event.id, event_type: event.eventType, timestamp, company_id: event.companyId, data: event.data }),
  };
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
