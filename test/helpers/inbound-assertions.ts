import type { JsonResponse, Tenant, TestStack } from './stack';

export interface RecordedEvent {
  id: string;
  event_type: string;
  data: Record<string, any>;
  catalog_data: Record<string, any>;
  origin_api_key_id: string;
}

/**
 * A success answer (webhooks.md 2.11) whose event_id is the id of the outbox event the change recorded, of
 * `eventType` and originated by the key that sent it. Returns the event.
 */
export async function expectRecorded(stack: TestStack, response: JsonResponse & { sentWith: Tenant }, eventType: string): Promise<RecordedEvent> {
  expect({ status: response.status, body: response.body }).toEqual({
    status: 200,
    body: { success: true, message: expect.any(String), event_id: expect.any(String), record_id: expect.any(String) },
  });
  const [event] = await stack.em().execute<RecordedEvent[]>('select id, event_type, data, catalog_data, origin_api_key_id from outbox_events where id = ?', [
    response.body.event_id,
  ]);
  expect({ type: event?.event_type, origin: event?.origin_api_key_id }).toEqual({ type: eventType, origin: response.sentWith.apiKeyId });
  return event!;
}

/** An error answer in the spec's shape naming `field`. */
export function expectError(response: JsonResponse, status: number, code: string, field: string | null): void {
  expect({ status: response.status, error: response.body?.error }).toEqual({
    status,
    error: { code, message: expect.any(String), details: { field, reason: expect.any(String) } },
  });
}
