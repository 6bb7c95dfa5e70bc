import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import type { Actor } from '../domain/accounts/actor';
import { Company } from '../domain/accounts/company.entity';
import type { EventPayload, EventType } from './catalog';
import { OutboxEvent } from './outbox-event.entity';

/**
 * Appends an event to the outbox in the caller's unit of work. Call it inside the transaction that makes the
 * change: both commit together or neither does.
 */
export function recordEvent(
  em: EntityManager,
  actor: Actor,
  eventType: EventType,
  payload: EventPayload,
  eventId: string = uuidv7(),
): OutboxEvent {
  return em.create(OutboxEvent, {
    id: eventId,
    company: em.getReference(Company, actor.companyId),
    eventType,
    data: payload.data,
    catalogData: payload.catalogData,
    originApiKeyId: actor.apiKeyId,
  });
}
