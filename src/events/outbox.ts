import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import type { Actor } from '../domain/accounts/actor';
import { Company } from '../domain/accounts/company.entity';
import { traceContextOf } from '../observability/trace-context';
import { OutboxEvent } from './outbox-event.entity';
import { recordKeyOf } from './record-keys';
import type { EventKey, EventPayload } from './registry';

/** A change no API key made (a scheduled report's run): every subscriber of the company gets its events. */
export interface ScheduledOrigin {
  companyId: string;
  apiKeyId: null;
}

/**
 * Appends an event to the outbox in the caller's unit of work. Call it inside the transaction that makes the
 * change: both commit together or neither does. The payload holds the data of each shape that describes
 * the event, typed by its schema in schemas/events/, and the event names its record (record-keys.ts). The active span (the request's) is recorded as the event's
 * place in its trace.
 */
export function recordEvent<K extends EventKey>(
  em: EntityManager,
  actor: Actor | ScheduledOrigin,
  key: K,
  payload: EventPayload<K>,
  eventId: string = uuidv7(),
): OutboxEvent {
  const trace = traceContextOf();
  const data = (payload.a ?? null) as Record<string, unknown> | null;
  const catalogData = (payload.b ?? null) as Record<string, unknown> | null;
  return em.create(OutboxEvent, {
    id: eventId,
    company: em.getReference(Company, actor.companyId),
    eventType: key,
    data,
    catalogData,
    recordKey: recordKeyOf(key, data, catalogData),
    originApiKeyId: actor.apiKeyId,
    traceparent: trace?.traceparent ?? null,
    tracestate: trace?.tracestate ?? null,
  });
}
