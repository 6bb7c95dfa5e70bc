import type { EntityManager } from '@mikro-orm/postgresql';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { inSpan } from '../observability/spans';
import type { AttemptOutcome, AttemptTrigger } from './delivery-attempt.entity';
import { disableEndpoint } from './endpoints-service';
import type { WebhookEndpoint } from './webhook-endpoint.entity';
import type { Logger } from '../logger';
import type { WebhookResult } from './webhook-sender';

/** 2xx delivered; 4xx (and a target we refuse to contact) permanent; 5xx, 3xx, timeouts, network errors retried. */
export function classify(result: WebhookResult): Exclude<AttemptOutcome, 'in_progress'> {
  if (result.failureKind === null) return 'succeeded';
  if (result.failureKind === 'blocked') return 'permanent_failure';
  if (result.failureKind === 'http' && result.statusCode !== null && result.statusCode < 500) return 'permanent_failure';
  return 'retryable_failure';
}

/** What the span of an attempt names: the delivery, the attempt and the endpoint's host. */
export interface AttemptSpanAttributes {
  companyId: string;
  deliveryId: string;
  endpointId: string;
  endpointHost: string;
  eventType: string;
  attemptNumber: number;
  trigger: AttemptTrigger;
}

/**
 * Makes the attempt in a span of its own, whose trace context the request carries to the endpoint (the sender sends
 * the active span's). The span names the endpoint by its host only (a URL's path or query may hold a token), and
 * holds neither the body nor a signature.
 */
export function inAttemptSpan(attempt: AttemptSpanAttributes, send: () => Promise<WebhookResult>): Promise<WebhookResult> {
  const attributes = {
    'company.id': attempt.companyId,
    'webhook.delivery_id': attempt.deliveryId,
    'webhook.endpoint_id': attempt.endpointId,
    'webhook.event_type': attempt.eventType,
    'webhook.attempt_number': attempt.attemptNumber,
    'webhook.trigger': attempt.trigger,
    'server.address': attempt.endpointHost,
    'http.request.method': 'POST',
  };
  return inSpan('webhook attempt', { kind: SpanKind.CLIENT, attributes }, async (span) => {
    const result = await send();
    if (result.statusCode !== null) span.setAttribute('http.response.status_code', result.statusCode);
    if (result.failureKind !== null) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.setAttribute('error.type', result.failureKind);
    }
    return result;
  });
}

/** What an attempt to an endpoint that is not active comes to: a permanent failure, without sending. */
export function endpointNotActive(endpoint: WebhookEndpoint): WebhookResult {
  const reason = endpoint.disabledReason ? `: ${endpoint.disabledReason}` : '';
  return { statusCode: null, durationMs: 0, error: `endpoint is ${endpoint.status}${reason}`, failureKind: 'blocked', responseExcerpt: null, retryAfterMs: null };
}

/** Takes a slot of the endpoint's per-second limit; the milliseconds until the next slot when there is none. */
export async function takeRateSlot(em: EntityManager, endpoint: WebhookEndpoint): Promise<number | null> {
  if (endpoint.maxAttemptsPerSecond === null) return null;
  const [row] = await em.execute<{ count: number; ms_left: number }[]>(
    `insert into webhook_endpoint_send_windows as w (endpoint_id, window_start, count)
     values (?, date_trunc('second', clock_timestamp()), 1)
     on conflict (endpoint_id) do update
       set count = case when w.window_start = excluded.window_start then w.count + 1 else 1 end, window_start = excluded.window_start
     returning count, (extract(epoch from w.window_start + interval '1 second' - clock_timestamp()) * 1000)::float8 as ms_left`,
    [endpoint.id],
  );
  return row!.count > endpoint.maxAttemptsPerSecond ? Math.max(10, Math.ceil(row!.ms_left)) : null;
}

/**
 * Keeps the endpoint's failing streak: cleared by a success, started by the first failure after one. A 410 Gone,
 * or a streak longer than WEBHOOK_DISABLE_AFTER, disables the endpoint with an alert. Atomic updates, so workers
 * attempting the same endpoint at once agree. True when this disabled the endpoint.
 */
export async function recordEndpointHealth(em: EntityManager, endpoint: WebhookEndpoint, succeeded: boolean, result: WebhookResult, disableAfterMs: number, logger: Logger): Promise<boolean> {
  if (succeeded) {
    await em.execute('update webhook_endpoints set failing_since = null where id = ? and failing_since is not null', [endpoint.id]);
    return false;
  }
  if (endpoint.status !== 'active' || result.failureKind === 'blocked') return false;
  if (result.statusCode === 410) {
    return disableEndpoint(em, logger, endpoint.id, `The endpoint answered 410 Gone at ${new Date().toISOString()}`);
  }
  const [row] = await em.execute<{ failing_ms: number }[]>(
    `update webhook_endpoints set failing_since = coalesce(failing_since, now()) where id = ?
     returning (extract(epoch from now() - failing_since) * 1000)::float8 as failing_ms`,
    [endpoint.id],
  );
  if (row && row.failing_ms >= disableAfterMs) {
    const hours = Math.round(row.failing_ms / 360_000) / 10;
    return disableEndpoint(em, logger, endpoint.id, `Every attempt failed for ${hours} h, the WEBHOOK_DISABLE_AFTER limit; the last: ${result.error ?? 'unknown error'}`);
  }
  return false;
}
