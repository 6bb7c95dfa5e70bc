import { Entity, ManyToOne, Property, type Ref, Unique } from '@mikro-orm/core';
import { CompanyRecord } from '../company-record';
import { WebhookDelivery } from './webhook-delivery.entity';
import { WebhookEndpoint } from './webhook-endpoint.entity';

/** Raised when a delivery has used up its attempts; one per failure (keyed by the attempts made so far). */
@Entity({ tableName: 'webhook_alerts' })
@Unique({ name: 'webhook_alerts_delivery_attempts_unique', properties: ['delivery', 'attemptCount'] })
export class WebhookAlert extends CompanyRecord {
  @ManyToOne(() => WebhookDelivery, { ref: true, deleteRule: 'cascade' })
  delivery!: Ref<WebhookDelivery>;

  @ManyToOne(() => WebhookEndpoint, { ref: true, deleteRule: 'cascade' })
  endpoint!: Ref<WebhookEndpoint>;

  @Property({ type: 'integer' })
  attemptCount!: number;

  @Property({ type: 'text' })
  message!: string;
}
