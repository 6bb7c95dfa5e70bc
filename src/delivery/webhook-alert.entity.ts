import { Entity, Index, ManyToOne, type Opt, Property, type Ref, Unique } from '@mikro-orm/core';
import { CompanyRecord } from '../domain/company-record';
import { WebhookDelivery } from './webhook-delivery.entity';
import { WebhookEndpoint } from './endpoints/webhook-endpoint.entity';

export const ALERT_KINDS = ['delivery_failed', 'endpoint_disabled', 'feed_behind'] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

/**
 * Raised when a delivery has used up its attempts (one per failure, keyed by the attempts made so far), or when
 * an endpoint was disabled for failing everything, or a feed's consumer fell behind (src/delivery/feeds/feed-alerts.ts).
 * Resolved when the delivery is delivered, the endpoint re-enabled, or the feed's consumer caught up.
 */
@Entity({ tableName: 'webhook_alerts' })
@Unique({ name: 'webhook_alerts_delivery_attempts_unique', properties: ['delivery', 'attemptCount'] })
@Index({
  name: 'webhook_alerts_feed_behind_open',
  expression: 'create unique index "webhook_alerts_feed_behind_open" on "webhook_alerts" ("endpoint_id") where "kind" = \'feed_behind\' and "resolved_at" is null',
})
export class WebhookAlert extends CompanyRecord {
  @Property({ type: 'text' })
  kind: Opt<AlertKind> = 'delivery_failed';

  /** null for an endpoint alert. */
  @ManyToOne(() => WebhookDelivery, { ref: true, nullable: true, deleteRule: 'cascade' })
  delivery: Ref<WebhookDelivery> | null = null;

  @ManyToOne(() => WebhookEndpoint, { ref: true, deleteRule: 'cascade' })
  endpoint!: Ref<WebhookEndpoint>;

  @Property({ type: 'integer' })
  attemptCount!: number;

  @Property({ type: 'text' })
  message!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  resolvedAt: Date | null = null;
}
