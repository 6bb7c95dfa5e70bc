import { Entity, Index, type Opt, Property } from '@mikro-orm/core';
import { CompanyRecord } from '../domain/company-record';

/**
 * An outbound event, written in the same transaction as the change it reports (the transactional outbox),
 * so a committed change always has its event and a rolled-back one never does. The dispatcher turns each
 * into deliveries and stamps `dispatchedAt`.
 */
@Entity({ tableName: 'outbox_events' })
@Index({ name: 'outbox_events_undispatched', expression: 'create index "outbox_events_undispatched" on "outbox_events" ("created_at") where "dispatched_at" is null' })
@Index({
  name: 'outbox_events_undispatched_company',
  expression: 'create index "outbox_events_undispatched_company" on "outbox_events" ("company_id", "created_at", "id") where "dispatched_at" is null',
})
@Index({
  name: 'outbox_events_undispatched_record_idx',
  expression:
    'create index "outbox_events_undispatched_record_idx" on "outbox_events" ("company_id", "record_key", "record_seq") where "record_key" is not null and "dispatched_at" is null',
})
/** Events not numbered yet, whose records' counters assign_record_seq takes in one order at commit: only ever a few rows. */
@Index({
  name: 'outbox_events_unsequenced',
  expression: 'create index "outbox_events_unsequenced" on "outbox_events" ("company_id", "record_key") where "record_key" is not null and "record_seq" is null',
})
@Index({
  name: 'outbox_events_fresh_company',
  expression:
    'create index "outbox_events_fresh_company" on "outbox_events" ("company_id", "created_at", "id") where "dispatched_at" is null and "waits_for" is null',
})
@Index({
  name: 'outbox_events_waiting_company',
  expression:
    'create index "outbox_events_waiting_company" on "outbox_events" ("company_id", "created_at", "id") where "dispatched_at" is null and "waits_for" is not null',
})
export class OutboxEvent extends CompanyRecord {
  /** The event's registry key: its shape A name, or its shape B name when only the catalog describes it. */
  @Property({ type: 'text' })
  eventType!: string;

  /** Shape A (detailed) data; null for events only the catalog describes. */
  @Property({ type: 'json', nullable: true })
  data: Record<string, unknown> | null = null;

  /** Shape B (catalog) data; null for events the catalog does not describe or delivers in shape A. */
  @Property({ type: 'json', nullable: true })
  catalogData: Opt<Record<string, unknown>> | null = null;

  /** The API key whose request made the change; its own endpoints are not sent the event (echo prevention). */
  @Property({ type: 'uuid', nullable: true })
  originApiKeyId: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  dispatchedAt: Date | null = null;

  /** Until when a dispatcher is turning the event into deliveries: another one takes it only after (it may have died). */
  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  claimedUntil: Opt<Date> | null = null;

  /**
   * The endpoints whose deliveries of the event wait for their room (healthy endpoints with full pipelines; its other
   * deliveries are written); null for an event no dispatcher has left waiting. The dispatcher claims a company's fresh
   * and waiting events in turns (src/delivery/outbox/claim.ts).
   */
  @Property({ type: 'uuid[]', nullable: true })
  waitsFor: Opt<string[]> | null = null;

  /**
   * The W3C trace context of the span that made the change (the request's, when traced): its deliveries' runs
   * continue that trace. Null while tracing is off.
   */
  @Property({ type: 'text', nullable: true })
  traceparent: string | null = null;

  @Property({ type: 'text', nullable: true })
  tracestate: string | null = null;

  /** The record the event is about (`<type>:<id>`, record-keys.ts); null for an event about no one record. */
  @Property({ type: 'text', nullable: true })
  recordKey: string | null = null;

  /**
   * The event's place among its record's events, in the order their transactions committed: assigned at commit
   * (src/db/sql/triggers/outbox_events_record_seq.sql), so a transaction that began first but committed later comes after.
   */
  @Property({ type: 'bigint', nullable: true })
  recordSeq: Opt<string> | null = null;
}
