import { Entity, ManyToOne, type Opt, Property, type Ref } from '@mikro-orm/core';
import { CompanyRecord } from '../domain/company-record';
import { WebhookEndpoint } from './endpoints/webhook-endpoint.entity';

export const RECOVERY_STATUSES = ['running', 'completed'] as const;
export type RecoveryStatus = (typeof RECOVERY_STATUSES)[number];

/**
 * A bulk re-run of an endpoint's failed deliveries since a time: which deliveries it took (fixed when it
 * starts) and how many re-runs it has requested so far. Their outcomes are read from the deliveries.
 */
@Entity({ tableName: 'webhook_recoveries' })
export class WebhookRecovery extends CompanyRecord {
  @ManyToOne(() => WebhookEndpoint, { ref: true, deleteRule: 'cascade' })
  endpoint!: Ref<WebhookEndpoint>;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  since!: Date;

  @Property({ type: 'text' })
  status: Opt<RecoveryStatus> = 'running';

  @Property({ type: 'text[]' })
  deliveryIds: Opt<string[]> = [];

  @Property({ type: 'integer' })
  requested: Opt<number> = 0;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  completedAt: Date | null = null;
}
