import { type Delivery, parseDelivery } from './event-contract';
import { outboxOf } from './fixtures';
import { startReceiver, type TestReceiver } from './https-receiver';
import { waitFor } from './processes';
import { createTenant, envelope, type JsonResponse, request, sendInbound, startStack, type Tenant, type TestStack } from './stack';
import { addApiKey, registerEndpoint, type RegisteredEndpoint } from './webhooks';

export type OutboxRow = Awaited<ReturnType<typeof outboxOf>>[number];

/**
 * A company with a shape A and a shape B endpoint subscribed to `*`, each on its own HTTPS receiver. The
 * endpoints belong to `owner`; changes are made with two other keys of the company (`rest`, `send`), so echo
 * prevention keeps nothing back but what is made with the owner's key.
 */
export interface EventDeliveries {
  stack: TestStack;
  owner: Tenant;
  restKey: Tenant;
  inboundKey: Tenant;
  endpointA: RegisteredEndpoint;
  endpointB: RegisteredEndpoint;
  /** A REST call with restKey; anything but 2xx throws. Returns the body. */
  rest(method: string, path: string, body?: unknown): Promise<any>;
  /** A signed inbound operation with inboundKey; anything but 200 throws. */
  send(eventType: string, data: Record<string, unknown>): Promise<JsonResponse>;
  /**
   * Waits until every event of the company is dispatched and both receivers have every delivery made of
   * them. Returns the outbox and all each endpoint received of the events `ofInterest`, in the order the
   * changes were made (deliveries run side by side and arrive in any order).
   */
  collect(ofInterest?: (eventName: string) => boolean): Promise<{ all: OutboxRow[]; outbox: OutboxRow[]; inA: Delivery[]; inB: Delivery[] }>;
  close(): Promise<void>;
}

export async function startEventDeliveries(): Promise<EventDeliveries> {
  const stack = await startStack();
  const receivers: TestReceiver[] = [];
  try {
    const owner = await createTenant(stack.orm, ['admin']);
    const restKey = await addApiKey(stack, owner, ['admin']);
    const inboundKey = await addApiKey(stack, owner, ['webhooks:inbound']);
    const [receiverA, receiverB] = [await startReceiver(), await startReceiver()];
    receivers.push(receiverA, receiverB);
    const endpointA = await registerEndpoint(stack, owner.key, { url: receiverA.url, event_types: ['*'], payload_shape: 'A' });
    const endpointB = await registerEndpoint(stack, owner.key, { url: receiverB.url, event_types: ['*'], payload_shape: 'B' });

    const received = async (receiver: TestReceiver, endpoint: RegisteredEndpoint, all: OutboxRow[], ofInterest: (name: string) => boolean) => {
      const deliveries = await stack.em().execute<{ id: string; event_id: string }[]>('select id, event_id from webhook_deliveries where endpoint_id = ?', [endpoint.id]);
      const position = new Map(all.map((e, i) => [e.id, i]));
      const eventOf = new Map(deliveries.map((d) => [d.id, d.event_id]));
      const positionOf = (d: Delivery) => position.get(eventOf.get(String(d.request.headers['x-webhook-id']))!)!;
      await receiver.waitForRequests(deliveries.length, 30_000);
      // Everything received, so that a delivery made twice shows.
      return receiver.requests
        .map(parseDelivery)
        .filter((d) => ofInterest(d.event))
        .sort((x, y) => positionOf(x) - positionOf(y));
    };

    return {
      stack,
      owner,
      restKey,
      inboundKey,
      endpointA,
      endpointB,
      async rest(method, path, body) {
        const response = await request(stack.baseUrl, method, `/api/v1${path}`, { key: restKey.key, body });
        if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(response.body)}`);
        return response.body;
      },
      async send(eventType, data) {
        const response = await sendInbound(stack.baseUrl, inboundKey, envelope(eventType, data));
        if (response.status !== 200) throw new Error(`${eventType}: ${response.status} ${JSON.stringify(response.body)}`);
        return response;
      },
      async collect(ofInterest = () => true) {
        const all = await outboxOf(stack, owner.companyId);
        await waitFor(async () => {
          const [row] = await stack.em().execute<{ n: string }[]>('select count(*) as n from outbox_events where company_id = ? and dispatched_at is null', [owner.companyId]);
          return Number(row!.n) === 0;
        });
        return {
          all,
          outbox: all.filter((e) => ofInterest(e.event_type)),
          inA: await received(receiverA, endpointA, all, ofInterest),
          inB: await received(receiverB, endpointB, all, ofInterest),
        };
      },
      async close() {
        for (const receiver of receivers) await receiver.close();
        await stack.close();
      },
    };
  } catch (error) {
    for (const receiver of receivers) await receiver.close();
    await stack.close();
    throw error;
  }
}
