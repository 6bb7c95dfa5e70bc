import { Entity, ManyToOne, type Opt, Property, type Ref, Unique } from '@mikro-orm/core';
import { CompanyRecord } from '../domain/company-record';
import { WebhookDelivery } from './webhook-delivery.entity';
import type { AttemptTrigger } from '../../workflows/webhook-delivery.contract';

export const ATTEMPT_OUTCOMES = ['in_progress', 'succeeded', 'retryable_failure', 'permanent_failure'] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

/** One HTTP attempt of a delivery; `attemptNumber` is the X-Webhook-Retry it carried. */
@Entity({ tableName: 'webhook_delivery_attempts' })
@Unique({ name: 'webhook_delivery_attempts_number_unique', properties: ['delivery', 'attemptNumber'] })
export class DeliveryAttempt extends CompanyRecord {
  @ManyToOne(() => WebhookDelivery, { ref: true, deleteRule: 'cascade' })
  delivery!: Ref<WebhookDelivery>;

  @Property({ type: 'integer' })
  attemptNumber!: number;

  @Property({ type: 'text' })
  trigger!: AttemptTrigger;

  @Property({ type: 'text' })
  outcome: Opt<AttemptOutcome> = 'in_progress';

  @Property({ type: 'integer', nullable: true })
  statusCode: number | null = null;

  @Property({ type: 'integer', nullable: true })
  durationMs: number | null = null;

  @Property({ type: 'text', nullable: true })
  error: string | null = null;

  @Property({ type: 'text', nullable: true })
  responseExcerpt: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  finishedAt: Date | null = null;

  /** The trace the attempt was made in (its traceparent went to the endpoint); null while tracing is off. */
  @Property({ type: 'text', nullable: true })
  traceId: string | null = null;
}
