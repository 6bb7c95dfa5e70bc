import type { EntityManager } from '@mikro-orm/postgresql';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Orm } from './db/orm';
import { ALERT_KINDS } from './delivery/webhook-alert.entity';
import { CIRCUIT_STATES } from './delivery/endpoints/webhook-endpoint.entity';
import { DELIVERY_STATUSES, HOLD_REASONS } from '../workflows/webhook-delivery.contract';

/**
 * Prometheus metrics (GET /metrics on the api and on the worker). Counters and histograms count what this process
 * did; gauges of the shared state (deliveries by status, outbox lag, open alerts) are read from PostgreSQL at each
 * scrape, so every replica reports the same values: alert on max() of them, not sum().
 */
function addStateGauges(registry: Registry, orm: Orm): void {
  const em = () => orm.em.fork() as EntityManager;
  new Gauge({
    name: 'webhook_deliveries',
    help: 'Webhook deliveries by status (all companies, test deliveries excluded).',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      const rows = await em().execute<{ status: string; count: string }[]>('select status, count(*) as count from webhook_deliveries where not is_test group by status');
      for (const status of DELIVERY_STATUSES) this.set({ status }, Number(rows.find((r) => r.status === status)?.count ?? 0));
    },
  });
  new Gauge({
    name: 'outbox_lag_seconds',
    help: 'Age of the oldest outbox event not yet dispatched to its subscribers (0 when none is waiting).',
    registers: [registry],
    async collect() {
      const [row] = await em().execute<{ age: number | null }[]>('select extract(epoch from now() - min(created_at))::float8 as age from outbox_events where dispatched_at is null');
      this.set(Math.max(0, row?.age ?? 0));
    },
  });
  new Gauge({
    name: 'webhook_endpoint_circuits',
    help: 'Active webhook endpoints by the state of their circuit breaker (closed, open, half_open).',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const rows = await em().execute<{ state: string; count: string }[]>(
        `select circuit_state as state, count(*) as count from webhook_endpoints where status = 'active' group by circuit_state`,
      );
      for (const state of CIRCUIT_STATES) this.set({ state }, Number(rows.find((r) => r.state === state)?.count ?? 0));
    },
  });
  new Gauge({
    name: 'webhook_deliveries_held',
    help: 'Deliveries waiting for their endpoint without making their attempt, by reason (circuit_open, endpoint_busy, awaiting_predecessor).',
    labelNames: ['reason'],
    registers: [registry],
    async collect() {
      const rows = await em().execute<{ reason: string; count: string }[]>(
        // As admission counts them: a run that has not looked again a minute after it said it would was terminated.
        `select held_reason as reason, count(*) as count from webhook_deliveries where held_until > now() - interval '1 minute' group by held_reason`,
      );
      for (const reason of HOLD_REASONS) this.set({ reason }, Number(rows.find((r) => r.reason === reason)?.count ?? 0));
    },
  });
  new Gauge({
    name: 'webhook_deliveries_deferred',
    help: 'Deliveries waiting for room at their endpoint without a run yet (their endpoint has as many runs as it may); their runs start as it makes room.',
    registers: [registry],
    async collect() {
      const [row] = await em().execute<{ count: string }[]>('select count(*) as count from webhook_deliveries where deferred_since is not null');
      this.set(Number(row?.count ?? 0));
    },
  });
  new Gauge({
    name: 'webhook_feed_unacknowledged_events',
    help: "Events of active feeds after their consumers' acknowledged cursors, all feeds together (each feed's on GET /webhook-endpoints/{id}).",
    registers: [registry],
    async collect() {
      const [row] = await em().execute<{ count: string }[]>(
        `select count(*) as count from webhook_endpoints e join webhook_feed_events f on f.endpoint_id = e.id and f.position > e.feed_acknowledged
          where e.delivery = 'feed' and e.status = 'active'`,
      );
      this.set(Number(row?.count ?? 0));
    },
  });
  new Gauge({
    name: 'webhook_feed_oldest_unacknowledged_seconds',
    help: 'Age of the oldest unacknowledged event of any active feed (0 when none waits); FEED_LAG_ALERT_MINUTES past it raises a feed_behind alert.',
    registers: [registry],
    async collect() {
      const [row] = await em().execute<{ seconds: number | null }[]>(
        `select extract(epoch from now() - min(o.created_at))::float8 as seconds from webhook_endpoints e
          cross join lateral (select f.created_at from webhook_feed_events f where f.endpoint_id = e.id and f.position > e.feed_acknowledged order by f.position limit 1) o
          where e.delivery = 'feed' and e.status = 'active'`,
      );
      this.set(row?.seconds ?? 0);
    },
  });
  new Gauge({
    name: 'webhook_alerts_open',
    help: 'Alerts not resolved yet, by kind (delivery_failed, endpoint_disabled, feed_behind).',
    labelNames: ['kind'],
    registers: [registry],
    async collect() {
      const rows = await em().execute<{ kind: string; count: string }[]>('select kind, count(*) as count from webhook_alerts where resolved_at is null group by kind');
      for (const kind of ALERT_KINDS) this.set({ kind }, Number(rows.find((r) => r.kind === kind)?.count ?? 0));
    },
  });
}

export interface ApiMetrics {
  registry: Registry;
  requests: Counter<'method' | 'route' | 'status'>;
  rateLimited: Counter<'policy'>;
  inboundOperations: Counter<'event_type' | 'outcome'>;
}

export function createApiMetrics(orm: Orm): ApiMetrics {
  const registry = new Registry();
  addStateGauges(registry, orm);
  return {
    registry,
    requests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route (the path template) and status.',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    rateLimited: new Counter({
      name: 'http_rate_limited_requests_total',
      help: 'Requests refused with 429 by the per-key rate limit, by policy (rest, inbound, inbound_unsigned).',
      labelNames: ['policy'],
      registers: [registry],
    }),
    inboundOperations: new Counter({
      name: 'inbound_operations_total',
      help: 'Inbound webhook operations, by event_type and outcome (succeeded, or the error code).',
      labelNames: ['event_type', 'outcome'],
      registers: [registry],
    }),
  };
}

export interface WorkerMetrics {
  registry: Registry;
  attemptDuration: Histogram<'endpoint_host' | 'outcome'>;
  circuitTransitions: Counter<'to'>;
  /** An attempt's statement (begin, finish) cancelled by PostgreSQL to break a deadlock, and run again. */
  attemptDeadlocks: Counter<'statement'>;
  /** Counted by the outbox dispatcher (src/delivery/outbox/dispatcher.ts) of the process. */
  eventsFilteredOut: Counter<'endpoint_id'>;
  /** Transformations evaluated (deliveries before their first attempt, feed entries), by endpoint and outcome. */
  transformations: Counter<'endpoint_id' | 'outcome'>;
  /** How long one evaluation of a transformation took (every expression of it), by outcome. */
  transformationDuration: Histogram<'outcome'>;
}

export function createWorkerMetrics(orm: Orm): WorkerMetrics {
  const registry = new Registry();
  addStateGauges(registry, orm);
  return {
    registry,
    attemptDuration: new Histogram({
      name: 'webhook_attempt_duration_seconds',
      help: 'Duration of delivery attempts (connect to response), by endpoint host and outcome.',
      labelNames: ['endpoint_host', 'outcome'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    circuitTransitions: new Counter({
      name: 'webhook_circuit_transitions_total',
      help: "Endpoint circuit breakers this worker opened (after failures, or a failed probe) or closed (a probe or any attempt succeeded).",
      labelNames: ['to'],
      registers: [registry],
    }),
    attemptDeadlocks: new Counter({
      name: 'webhook_attempt_deadlocks_total',
      help: "An attempt's statements (begin, finish) PostgreSQL cancelled to break a deadlock, each run again; the engine's lock order should keep it at 0.",
      labelNames: ['statement'],
      registers: [registry],
    }),
    eventsFilteredOut: new Counter({
      name: 'webhook_events_filtered_out_total',
      help: "Events an endpoint subscribes to that its filter left out (no delivery made), by endpoint.",
      labelNames: ['endpoint_id'],
      registers: [registry],
    }),
    transformations: new Counter({
      name: 'webhook_transformations_total',
      help: "Evaluations of endpoints' transformations, by endpoint and outcome (succeeded, or failed: the delivery failed without sending).",
      labelNames: ['endpoint_id', 'outcome'],
      registers: [registry],
    }),
    transformationDuration: new Histogram({
      name: 'webhook_transformation_duration_seconds',
      help: "Duration of one evaluation of an endpoint's transformation (body, headers and path), by outcome.",
      labelNames: ['outcome'],
      buckets: [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
  };
}

/** Serves GET /metrics of `registry` on its own port (the worker has no other HTTP server). */
export async function serveMetrics(registry: Registry, port: number, host: string): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((request, response) => {
    if (request.method !== 'GET' || request.url !== '/metrics') {
      response.writeHead(404).end();
      return;
    }
    registry.metrics().then(
      (text) => response.writeHead(200, { 'Content-Type': registry.contentType }).end(text),
      (error: unknown) => response.writeHead(500).end(String(error)),
    );
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
