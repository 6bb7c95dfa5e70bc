import { Entity, Index, ManyToOne, type Opt, Property, type Ref, Unique } from '@mikro-orm/core';
import { CompanyRecord } from '../domain/company-record';
import { OutboxEvent } from '../events/outbox-event.entity';
import { WebhookEndpoint } from './endpoints/webhook-endpoint.entity';
import type { DeliveryStatus, HoldReason } from '../../workflows/webhook-delivery.contract';


/**
 * One event on its way to one endpoint; its id is the X-Webhook-ID every attempt carries. The body is
 * fixed when the delivery is made, so every attempt and re-run sends the same bytes.
 */
@Entity({ tableName: 'webhook_deliveries' })
@Unique({ name: 'webhook_deliveries_event_endpoint_unique', properties: ['event', 'endpoint'] })
@Index({ name: 'webhook_deliveries_company_created_idx', properties: ['company', 'createdAt', 'id'] })
@Index({ name: 'webhook_deliveries_endpoint_created_idx', properties: ['endpoint', 'createdAt'] })
@Index({ name: 'webhook_deliveries_endpoint_status_idx', properties: ['endpoint', 'status', 'createdAt'] })
@Index({
  name: 'webhook_deliveries_endpoint_held_idx',
  expression: 'create index "webhook_deliveries_endpoint_held_idx" on "webhook_deliveries" ("endpoint_id", "created_at", "id") where "held_until" is not null',
})
@Index({
  name: 'webhook_deliveries_endpoint_deferred_idx',
  expression: 'create index "webhook_deliveries_endpoint_deferred_idx" on "webhook_deliveries" ("endpoint_id", "created_at", "id") where "deferred_since" is not null',
})
@Index({
  name: 'webhook_deliveries_company_unbegun_idx',
  expression:
    'create index "webhook_deliveries_company_unbegun_idx" on "webhook_deliveries" ("company_id", "created_at") where "status" = \'pending\' and "held_until" is null and not "is_test" and "deferred_since" is null',
})
@Index({
  name: 'webhook_deliveries_endpoint_unbegun_idx',
  expression:
    'create index "webhook_deliveries_endpoint_unbegun_idx" on "webhook_deliveries" ("endpoint_id", "created_at") where "status" = \'pending\' and "held_until" is null and not "is_test" and "deferred_since" is null',
})
@Index({
  name: 'webhook_deliveries_company_starting_idx',
  expression: 'create index "webhook_deliveries_company_starting_idx" on "webhook_deliveries" ("company_id") where "start_claimed_until" is not null',
})
@Index({
  name: 'webhook_deliveries_endpoint_starting_idx',
  expression: 'create index "webhook_deliveries_endpoint_starting_idx" on "webhook_deliveries" ("endpoint_id") where "start_claimed_until" is not null',
})
@Index({
  name: 'webhook_deliveries_record_order_idx',
  expression:
    'create index "webhook_deliveries_record_order_idx" on "webhook_deliveries" ("endpoint_id", "record_key", "record_seq") where "record_key" is not null and "status" in (\'pending\', \'retrying\')',
})
export class WebhookDelivery extends CompanyRecord {
  @ManyToOne(() => WebhookEndpoint, { ref: true, deleteRule: 'cascade' })
  endpoint!: Ref<WebhookEndpoint>;

  /** The outbox event delivered; null for test deliveries. */
  @ManyToOne(() => OutboxEvent, { ref: true, nullable: true, deleteRule: 'cascade' })
  event: Ref<OutboxEvent> | null = null;

  /** As sent in X-Webhook-Event (shape B names for shape B endpoints). */
  @Property({ type: 'text' })
  eventType!: string;

  /** The event's envelope in the endpoint's shape, as sent (or, with a transformation, as transformed). */
  @Property({ type: 'text' })
  payload!: string;

  /**
   * What the endpoint's transformation made of `payload` before the delivery's first attempt (or its last re-run by
   * hand), which its attempts send: the body, the headers, and the path and query in place of the URL's. Null without
   * a transformation (src/delivery/endpoints/endpoint-transformation.ts).
   */
  @Property({ type: 'text', nullable: true })
  transformedPayload: Opt<string> | null = null;

  @Property({ type: 'json', nullable: true })
  transformedHeaders: Opt<Record<string, string>> | null = null;

  @Property({ type: 'text', nullable: true })
  transformedPath: Opt<string> | null = null;

  @Property({ type: 'boolean' })
  isTest: Opt<boolean> = false;

  @Property({ type: 'text' })
  status: Opt<DeliveryStatus> = 'pending';

  @Property({ type: 'integer' })
  attemptCount: Opt<number> = 0;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  lastAttemptAt: Date | null = null;

  @Property({ type: 'integer', nullable: true })
  lastStatusCode: number | null = null;

  @Property({ type: 'text', nullable: true })
  lastError: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  nextAttemptAt: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  deliveredAt: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  failedAt: Date | null = null;

  /** Set while the run waits to make its next attempt (src/delivery/endpoints/endpoint-admission.ts); null otherwise. */
  @Property({ type: 'text', nullable: true })
  heldReason: HoldReason | null = null;

  /** When the waiting run looks again at the latest; waiting deliveries are let through oldest first. */
  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  heldUntil: Date | null = null;

  /** When the held delivery was last woken: for a few seconds it keeps a free slot of its endpoint for itself. */
  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  wokenAt: Opt<Date> | null = null;

  /**
   * Set while the delivery waits for room at its endpoint without a run (its endpoint has as many deliveries waiting as
   * it may: src/delivery/outbox/endpoint-room.ts); null once its run has been started.
   */
  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  deferredSince: Opt<Date> | null = null;

  /** Until when a dispatcher is starting the run of this deferred delivery; another one may after (it may have died). */
  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  startClaimedUntil: Opt<Date> | null = null;

  /**
   * The W3C trace context the delivery was made in (its event's, or the test send's request's): its run continues
   * that trace, and a re-run links to it. Null while tracing is off.
   */
  @Property({ type: 'text', nullable: true })
  traceparent: string | null = null;

  @Property({ type: 'text', nullable: true })
  tracestate: string | null = null;

  /**
   * Its event's record and place among the record's events (OutboxEvent): an endpoint ordered per record gets the
   * record's deliveries one at a time in that order. Null for test sends and events about no one record.
   */
  @Property({ type: 'text', nullable: true })
  recordKey: Opt<string> | null = null;

  @Property({ type: 'bigint', nullable: true })
  recordSeq: Opt<string> | null = null;
}

/** Why the delivery waits without its attempt: held by its run, or deferred (no run yet) behind its endpoint's backlog; null when it does not wait. */
export function waitingReason(delivery: Pick<WebhookDelivery, 'heldUntil' | 'heldReason' | 'deferredSince' | 'status'>): HoldReason | null {
  if (delivery.heldUntil !== null && delivery.heldReason !== null) return delivery.heldReason;
  return delivery.deferredSince !== null && delivery.status === 'pending' ? 'endpoint_busy' : null;
}
