import { createLogger } from '../../src/logger';
import { type OutboxDispatcher, startOutboxDispatcher } from '../../src/delivery/outbox/dispatcher';
import { temporalDeliveryWorkflows } from '../../src/temporal/temporal-delivery-workflows';
import { startReceiver, type TestReceiver } from '../helpers/https-receiver';
import { awayFromMinuteEdge, waitFor } from '../helpers/processes';
import { createTenant, envelope, request, sendInbound, startStack, testConfig, type TestStack } from '../helpers/stack';
import { addApiKey, registerEndpoint } from '../helpers/webhooks';

/** One sample of a Prometheus text exposition: `name{label="value",…} number`. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

async function scrape(url: string): Promise<Sample[]> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return (await response.text())
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const [, name, labels, value] = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)!;
      return { name: name!, labels: Object.fromEntries([...(labels ?? '').matchAll(/(\w+)="([^"]*)"/g)].map(([, k, v]) => [k!, v!])), value: Number(value) };
    });
}

/** The value of the sample with this name and at least these labels; 0 when there is none (a counter never incremented). */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value ?? 0;
}

/** GET /metrics of the api and of the worker after a known sequence of requests and deliveries: the numbers match it. */
describe('GET /metrics', () => {
  let stack: TestStack;
  let dispatcher: OutboxDispatcher | null = null;
  const receivers: TestReceiver[] = [];

  beforeAll(async () => {
    // The dispatcher starts later, so that the outbox has a lag to show first.
    stack = await startStack({ dispatcher: false, config: await testConfig({ WEBHOOK_TIMEOUT_MS: '1500' }) });
  });
  afterAll(async () => {
    await dispatcher?.stop();
    await Promise.all(receivers.map((r) => r.close()));
    await stack.close();
  });

  it('counts requests by route and status, rate-limited requests, inbound operations, deliveries, attempt latencies, outbox lag and open alerts', async () => {
    const apiMetrics = `${stack.baseUrl}/metrics`;
    const workerMetrics = `http://127.0.0.1:${stack.worker!.metricsPort}/metrics`;
    const tenant = await createTenant(stack.orm, ['admin']);
    const subscriber = await addApiKey(stack, tenant);
    const throttled = await addApiKey(stack, tenant);

    // Two endpoints: one takes every delivery, one refuses every one (a 400 fails a delivery at once).
    const taking = await startReceiver();
    const refusing = await startReceiver();
    receivers.push(taking, refusing);
    refusing.respondWith(() => ({ status: 400, body: 'no' }));
    for (const hook of [taking, refusing]) await registerEndpoint(stack, subscriber.key, { url: hook.url, event_types: ['employee.created'] });

    // REST: three 200s, a 404, a 400, and one key that goes past 60 a minute: 60 answered, then a 429.
    await awayFromMinuteEdge();
    for (let i = 0; i < 3; i++) expect((await request(stack.baseUrl, 'GET', '/api/v1/customers', { key: tenant.key })).status).toBe(200);
    expect((await request(stack.baseUrl, 'GET', '/api/v1/customers/01a20000-0000-7000-8000-000000000000', { key: tenant.key })).status).toBe(404);
    expect((await request(stack.baseUrl, 'GET', '/api/v1/customers?limit=0', { key: tenant.key })).status).toBe(400);
    for (let i = 0; i < 60; i++) expect((await request(stack.baseUrl, 'GET', '/api/v1/customers', { key: throttled.key })).status).toBe(200);
    expect((await request(stack.baseUrl, 'GET', '/api/v1/customers', { key: throttled.key })).status).toBe(429);
    // Inbound: two employees created, one refused.
    for (const n of [1, 2]) {
      const sent = await sendInbound(stack.baseUrl, tenant, envelope('employee.created', { emp_number: `M-${n}`, name: 'Dana', email: 'dana@example.com', employee_type: 'site_worker' }));
      expect(sent.status).toBe(200);
    }
    expect((await sendInbound(stack.baseUrl, tenant, envelope('employee.created', { emp_number: 'M-3' }))).status).toBe(400);

    // Nothing dispatches yet: the outbox lags.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const before = await scrape(apiMetrics);
    expect(valueOf(before, 'outbox_lag_seconds')).toBeGreaterThanOrEqual(1);

    dispatcher = await startOutboxDispatcher({
      config: stack.config,
      orm: stack.orm,
      deliveryWorkflows: temporalDeliveryWorkflows(stack.temporal, stack.config.temporal.taskQueues),
      logger: createLogger('silent'),
    });
    await waitFor(async () => {
      const rows = await stack.em().execute<{ status: string }[]>('select status from webhook_deliveries');
      return rows.length === 4 && rows.every((r) => r.status === 'delivered' || r.status === 'failed');
    });
    // The failed deliveries' operational events (delivery.failed) are written as they fail: dispatched a moment later.
    await waitFor(async () => {
      const [row] = await stack.em().execute<{ n: number }[]>('select count(*)::int as n from outbox_events where dispatched_at is null');
      return row!.n === 0;
    });

    const api = await scrape(apiMetrics);
    const requests = (route: string, status: number, method = 'GET') => valueOf(api, 'http_requests_total', { method, route, status: String(status) });
    expect(requests('/api/v1/customers', 200)).toBe(63);
    expect(requests('/api/v1/customers', 400)).toBe(1);
    expect(requests('/api/v1/customers', 429)).toBe(1);
    expect(requests('/api/v1/customers/:id', 404)).toBe(1);
    expect(requests('/api/v1/webhook-endpoints', 201, 'POST')).toBe(2);
    expect(requests('/webhooks/inbound', 200, 'POST')).toBe(2);
    expect(requests('/webhooks/inbound', 400, 'POST')).toBe(1);
    expect(valueOf(api, 'http_rate_limited_requests_total', { policy: 'rest' })).toBe(1);
    expect(valueOf(api, 'inbound_operations_total', { event_type: 'employee.created', outcome: 'succeeded' })).toBe(2);
    expect(valueOf(api, 'inbound_operations_total', { event_type: 'employee.created', outcome: 'INVALID_REQUEST' })).toBe(1);

    // Shared state, read from PostgreSQL, the same on every process.
    const worker = await scrape(workerMetrics);
    for (const samples of [api, worker]) {
      expect(valueOf(samples, 'webhook_deliveries', { status: 'delivered' })).toBe(2);
      expect(valueOf(samples, 'webhook_deliveries', { status: 'failed' })).toBe(2);
      expect(valueOf(samples, 'webhook_alerts_open', { kind: 'delivery_failed' })).toBe(2);
      expect(valueOf(samples, 'webhook_alerts_open', { kind: 'endpoint_disabled' })).toBe(0);
      expect(valueOf(samples, 'outbox_lag_seconds')).toBe(0);
    }
    // The worker's attempts, by endpoint host and outcome.
    expect(valueOf(worker, 'webhook_attempt_duration_seconds_count', { endpoint_host: 'localhost', outcome: 'succeeded' })).toBe(2);
    expect(valueOf(worker, 'webhook_attempt_duration_seconds_count', { endpoint_host: 'localhost', outcome: 'permanent_failure' })).toBe(2);
    expect(valueOf(worker, 'webhook_attempt_duration_seconds_bucket', { endpoint_host: 'localhost', outcome: 'succeeded', le: '+Inf' })).toBe(2);
    expect(valueOf(worker, 'webhook_attempt_duration_seconds_sum', { endpoint_host: 'localhost', outcome: 'succeeded' })).toBeGreaterThan(0);
    console.log(
      'Metrics after 68 REST requests (1 rate-limited), 3 inbound operations and 4 deliveries: ' +
        `api http_requests_total ${api.filter((s) => s.name === 'http_requests_total').reduce((sum, s) => sum + s.value, 0)}, ` +
        `worker attempts ${valueOf(worker, 'webhook_attempt_duration_seconds_count', { outcome: 'succeeded' }) + valueOf(worker, 'webhook_attempt_duration_seconds_count', { outcome: 'permanent_failure' })}`,
    );
  });
});
