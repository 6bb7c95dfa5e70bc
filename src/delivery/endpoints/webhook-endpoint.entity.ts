import { BigIntType, Entity, Index, ManyToOne, type Opt, Property, type Ref } from '@mikro-orm/core';
import { ApiKey } from '../../domain/accounts/api-key.entity';
import { CompanyRecord } from '../../domain/company-record';
import type { EndpointFilter, EndpointTransformation } from '../../generated/schemas';
import type { PayloadShape } from '../delivery-body';

/** How an endpoint gets its events: signed POSTs to its URL, or a feed it reads by cursor (src/delivery/feeds/feed-service.ts). */
export const DELIVERY_KINDS = ['webhook', 'feed'] as const;
export type DeliveryKind = (typeof DELIVERY_KINDS)[number];
/** `deleted` endpoints are kept (with their delivery logs) but invisible through the API. */
export const ENDPOINT_STATUSES = ['active', 'disabled', 'deleted'] as const;
export type EndpointStatus = (typeof ENDPOINT_STATUSES)[number];
/**
 * none: each delivery goes on its own. per_record: one record's deliveries reach the endpoint one at a time, in the
 * order its changes committed (docs/ordering.md).
 */
export const ENDPOINT_ORDERINGS = ['none', 'per_record'] as const;
export type EndpointOrdering = (typeof ENDPOINT_ORDERINGS)[number];
/**
 * The endpoint's circuit breaker (src/delivery/endpoints/endpoint-admission.ts): closed lets attempts through; open holds them
 * until `circuitProbeAt`; half_open lets one probe attempt through, which closes or reopens it.
 */
export const CIRCUIT_STATES = ['closed', 'open', 'half_open'] as const;
export type CircuitState = (typeof CIRCUIT_STATES)[number];

/** A custom header as stored: a secret one's value sealed with ENCRYPTION_KEY, with a hint of it to show. */
export type StoredHeader = { name: string; secret: false; value: string } | { name: string; secret: true; valueSealed: string; hint: string | null };

/** OAuth 2.0 client credentials as stored (src/delivery/endpoints/endpoint-authentication.ts), the client secret sealed. */
export interface StoredOAuth {
  tokenUrl: string;
  clientId: string;
  clientSecretSealed: string;
  clientSecretHint: string | null;
  scope: string | null;
  audience: string | null;
}

/**
 * A subscriber's HTTPS URL (none for a feed) and the events it wants. `eventTypes` holds exact shape A names
 * (`employee.created`), categories (`project.*`) or `*`. An endpoint may belong to an API key: changes that
 * key makes are not sent back to it (echo prevention).
 */
@Entity({ tableName: 'webhook_endpoints' })
@Index({ name: 'webhook_endpoints_company_idx', properties: ['company', 'createdAt', 'id'] })
export class WebhookEndpoint extends CompanyRecord {
  @ManyToOne(() => ApiKey, { ref: true, nullable: true, deleteRule: 'set null' })
  apiKey: Ref<ApiKey> | null = null;

  @Property({ type: 'text' })
  delivery: Opt<DeliveryKind> = 'webhook';

  /** Where a webhook endpoint's deliveries go; null for a feed. */
  @Property({ type: 'text', nullable: true })
  url: string | null = null;

  @Property({ type: 'text', nullable: true })
  description: string | null = null;

  @Property({ type: 'text[]' })
  eventTypes!: string[];

  @Property({ type: 'text' })
  payloadShape: Opt<PayloadShape> = 'A';

  @Property({ type: 'text', default: 'none' })
  ordering: Opt<EndpointOrdering> = 'none';

  /** The signing secret (whsec_…), sealed with ENCRYPTION_KEY; shown to the subscriber once. */
  @Property({ type: 'text' })
  secretSealed!: string;

  @Property({ type: 'text' })
  status: Opt<EndpointStatus> = 'active';

  /** Why the endpoint was disabled (by an operator, a 410 Gone, or failing everything for too long). */
  @Property({ type: 'text', nullable: true })
  disabledReason: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  disabledAt: Date | null = null;

  /** When the endpoint started failing every attempt (null while it succeeds); disabled past WEBHOOK_DISABLE_AFTER. */
  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  failingSince: Date | null = null;

  /** The secret before the last rotation; deliveries carry its signature too until `previousSecretExpiresAt`. */
  @Property({ type: 'text', nullable: true })
  previousSecretSealed: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  previousSecretExpiresAt: Date | null = null;

  /** Headers every attempt carries (an API gateway's key, a tenant id); secret values sealed. Null for none. */
  @Property({ type: 'json', nullable: true })
  authHeaders: StoredHeader[] | null = null;

  /** OAuth 2.0 client credentials: a bearer token is fetched with them for the attempts; the client secret sealed. */
  @Property({ type: 'json', nullable: true })
  oauth: StoredOAuth | null = null;

  /** The client certificate (PEM, its chain may follow) attempts present for mutual TLS; null for none. */
  @Property({ type: 'text', nullable: true })
  clientCertificate: string | null = null;

  /** The client certificate's private key (PEM), sealed with ENCRYPTION_KEY. */
  @Property({ type: 'text', nullable: true })
  clientKeySealed: string | null = null;

  /** Conditions on an event's body the endpoint wants (src/delivery/endpoints/endpoint-filter.ts); null: every event it subscribes to. */
  @Property({ type: 'json', nullable: true })
  filter: EndpointFilter = null;

  /**
   * JSONata expressions making the body, headers and path the endpoint is sent (src/delivery/endpoints/endpoint-transformation.ts);
   * null: it is sent the event's envelope as it is.
   */
  @Property({ type: 'json', nullable: true })
  transformation: EndpointTransformation = null;

  /** At most this many attempts per second to this endpoint (all replicas together); null for no limit. */
  @Property({ type: 'integer', nullable: true })
  maxAttemptsPerSecond: number | null = null;

  @Property({ type: 'text' })
  circuitState: Opt<CircuitState> = 'closed';

  /**
   * The deliveries whose retries failed too since the last success (timeouts, connection errors, 5xx), each
   * once: one delivery's retries alone never open the breaker, its schedule spaces them already.
   */
  @Property({ type: 'uuid[]', defaultRaw: `'{}'` })
  circuitFailingDeliveries: Opt<string[]> = [];

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  circuitOpenedAt: Date | null = null;

  /** When an open breaker lets its probe attempt through. */
  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  circuitProbeAt: Date | null = null;

  /** Probes that failed since the breaker opened: each doubles the cool-down, up to its longest. */
  @Property({ type: 'integer' })
  circuitFailedProbes: Opt<number> = 0;

  /** The delivery making the probe attempt while half open. */
  @Property({ type: 'uuid', nullable: true })
  circuitProbeDeliveryId: string | null = null;

  /** A feed's last position written (append_feed_events): its entries are numbered 1, 2, … in the order they commit. */
  @Property({ type: new BigIntType('number') })
  feedPosition: Opt<number> = 0;

  /** The position the feed's consumer acknowledged (POST …/feed/ack): a consumer without a cursor resumes after it. */
  @Property({ type: new BigIntType('number') })
  feedAcknowledged: Opt<number> = 0;

  /** The feed's positions up to this one were deleted by retention: a cursor before it is gone (410). */
  @Property({ type: new BigIntType('number') })
  feedPruned: Opt<number> = 0;
}

/** What names an endpoint to people: its URL, or for a feed (which has none) "feed" and its id. */
export const endpointName = (endpoint: Pick<WebhookEndpoint, 'id' | 'url'>) => endpoint.url ?? `feed ${endpoint.id}`;
