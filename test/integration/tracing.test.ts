import { context } from '@opentelemetry/api';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { makeWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import { Worker } from '@temporalio/worker';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createUser } from '../../src/console/users/users-service';
import { createLogger } from '../../src/logger';
import { inSpan } from '../../src/observability/spans';
import { contextOf, traceContextOf, traceHeaders } from '../../src/observability/trace-context';
import { type OtlpProtocol, type RunningTracing, startTracing } from '../../src/observability/tracing';
import { installTemporalRuntime } from '../../src/temporal/runtime';
import { type RunningWorker, startWorker } from '../../src/worker/worker';
import { bundleWorkflows } from '../../src/worker/workflow-bundle';
import { capturedLogger } from '../helpers/captured-logs';
import { ConsoleClient } from '../helpers/console';
import { historyOf } from '../helpers/delivery-runs';
import { projectData } from '../helpers/fixtures';
import { startReceiver, testCertificate, type TestReceiver } from '../helpers/https-receiver';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../helpers/otlp-receiver';
import { waitFor } from '../helpers/processes';
import { createTenant, envelope, request, sendInbound, startStack, type Tenant, type TestStack } from '../helpers/stack';
import { addApiKey, registerEndpoint, type RegisteredEndpoint, verifiedAsReceiver, waitForDeliveryStatus } from '../helpers/webhooks';
import { deliveryWorkflowId } from '../../workflows/webhook-delivery.contract';

const SERVER = 2;
const CLIENT = 3;
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

/** The spans of one trace received so far, once `complete` says they are all there (flushing meanwhile). */
async function traceOf(tracing: RunningTracing, otlp: OtlpReceiver, traceId: string, complete: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
  return waitFor(
    async () => {
      await tracing.flush();
      const spans = otlp.spans.filter((span) => span.traceId === traceId);
      return complete(spans) ? spans : null;
    },
    30_000,
    `the spans of trace ${traceId}`,
  );
}

const named = (spans: ReceivedSpan[], name: string) => spans.filter((span) => span.name === name);

/** The span and its parents up to the root of its trace, as far as they were received. */
function ancestry(spans: ReceivedSpan[], span: ReceivedSpan): ReceivedSpan[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const chain = [span];
  for (let parent = byId.get(span.parentSpanId); parent; parent = byId.get(parent.parentSpanId)) chain.push(parent);
  return chain;
}

/** Everything a span says, as text: its name, attributes, events, links and resource. */
const everythingSaid = (span: ReceivedSpan) => JSON.stringify([span.name, span.attributes, span.events, span.links, span.resourceAttributes]);

/**
 * Issue 26 on a real export: the stack (api, dispatcher, worker) runs in this process with tracing on, exporting to an
 * OTLP/HTTP receiver here too, once in protobuf and once in JSON.
 */
describe('tracing', () => {
  let bundleDir: string;
  let tracedBundlePath: string;

  beforeAll(async () => {
    installTemporalRuntime('silent');
    // The workflow code with the tracing interceptors (the suite's shared bundle has none), built once for both rounds.
    bundleDir = mkdtempSync(path.join(os.tmpdir(), 'traced-bundle-'));
    tracedBundlePath = path.join(bundleDir, 'workflow-bundle.js');
    writeFileSync(tracedBundlePath, (await bundleWorkflows(true)).code);
  }, 120_000);
  afterAll(() => rmSync(bundleDir, { recursive: true, force: true }));

  describe.each<OtlpProtocol>(['http/protobuf', 'http/json'])('exported as OTLP %s', (protocol) => {
    let otlp: OtlpReceiver;
    let tracing: RunningTracing;
    let stack: TestStack;
    let worker: RunningWorker;
    let subscriberHook: TestReceiver;
    let erp: Tenant;
    let subscriber: Tenant;
    let endpoint: RegisteredEndpoint;
    let failing = false;
    // A token in the endpoint's query string, as some subscribers put one there: no span may hold it.
    const urlToken = `token-${randomUUID()}`;

    beforeAll(async () => {
      otlp = await startOtlpReceiver();
      tracing = await startTracing({ protocol, serviceName: 'tracing-test', url: otlp.url });
      // Started after the tracing: its Temporal clients and Worker carry the tracing interceptors.
      stack = await startStack({ worker: false, dispatcher: true });
      worker = await startWorker({ config: stack.config, orm: stack.orm, logger: createLogger('silent'), workflowBundlePath: tracedBundlePath, webhookCa: testCertificate().cert });
      subscriberHook = await startReceiver();
      subscriberHook.respondWith(() => (failing ? { status: 500 } : { status: 200 }));
      erp = await createTenant(stack.orm, ['admin']);
      subscriber = await addApiKey(stack, erp);
      endpoint = await registerEndpoint(stack, subscriber.key, { url: `${subscriberHook.url}?token=${urlToken}`, event_types: ['customer.created', 'project.created'] });
    }, 120_000);

    afterAll(async () => {
      await subscriberHook?.close();
      await worker?.close();
      await stack?.close();
      await tracing?.stop();
      await otlp?.close();
    });

    it('follows a change in one trace from the signed inbound request to the subscriber, who gets its traceparent', async () => {
      const name = `Traced Customer ${randomUUID()}`;
      const body = envelope('customer.created', { name, email: `${randomUUID()}@customers.example` });
      expect((await sendInbound(stack.baseUrl, erp, body)).status).toBe(200);

      const [received] = await subscriberHook.waitForRequests(1);
      const [, traceId, attemptSpanId] = TRACEPARENT.exec(String(received!.headers.traceparent)) ?? [];
      expect(traceId).toBeDefined();
      const deliveryId = String(received!.headers['x-webhook-id']);

      const spans = await traceOf(tracing, otlp, traceId!, (found) =>
        ['POST /webhooks/inbound', 'RunWorkflow:webhookDelivery', 'webhook attempt'].every((spanName) => named(found, spanName).length > 0),
      );
      const [inbound] = named(spans, 'POST /webhooks/inbound');
      expect(inbound).toMatchObject({ kind: SERVER, parentSpanId: '', service: 'tracing-test', attributes: expect.objectContaining({ 'http.route': '/webhooks/inbound', 'http.target': '/webhooks/inbound' }) });
      const [attempt] = named(spans, 'webhook attempt');
      expect(attempt).toMatchObject({
        kind: CLIENT,
        spanId: attemptSpanId,
        attributes: expect.objectContaining({ 'webhook.delivery_id': deliveryId, 'webhook.attempt_number': expect.anything(), 'server.address': 'localhost', 'company.id': erp.companyId }),
      });
      expect(Number(attempt!.attributes['http.response.status_code'])).toBe(200);
      // The run's span names the run and its company, and nothing else of its WorkflowInfo (memo, last failure…).
      const [run] = named(spans, 'RunWorkflow:webhookDelivery');
      expect(Object.keys(run!.attributes).sort()).toEqual(['attempt', 'company.id', 'runId', 'taskQueue', 'workflowId', 'workflowType']);
      expect(run!.attributes['company.id']).toBe(erp.companyId);
      // The attempt leads up through the local activity of the run's first task, the delivery's run and the dispatcher's
      // start of it to the request.
      const chain = ancestry(spans, attempt!).map((span) => span.name);
      expect(chain).toEqual(expect.arrayContaining(['RunActivity:makeFirstAttempt', 'RunWorkflow:webhookDelivery', 'StartWorkflow:webhookDelivery']));
      expect(chain.at(-1)).toBe('POST /webhooks/inbound');

      // The outbox write is in the request's trace too, its statement without the values it wrote.
      const outboxInsert = spans.find((span) => /insert into "outbox_events"/.test(String(span.attributes['db.statement'])));
      expect(outboxInsert).toBeDefined();
      expect(ancestry(spans, outboxInsert!).at(-1)).toBe(inbound);
      expect(String(outboxInsert!.attributes['db.statement'])).not.toContain(name);
      // Transaction control and the request's admission get no span of their own; the statements between do.
      const statements = spans.map((span) => String(span.attributes['db.statement'] ?? '')).filter((statement) => statement !== '');
      expect(statements.length).toBeGreaterThan(2);
      expect(statements.filter((statement) => /^(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b/i.test(statement))).toEqual([]);
      expect(statements.filter((statement) => statement.includes('admit_request('))).toEqual([]);

      // The delivery and its attempt name the trace; the signature verifies as ever, the new headers outside it.
      const delivery = await waitForDeliveryStatus(stack, subscriber.key, deliveryId, ['delivered']);
      expect(delivery.trace_id).toBe(traceId);
      expect(delivery.attempts.map((a: { trace_id: string }) => a.trace_id)).toEqual([traceId]);
      expect(verifiedAsReceiver(endpoint.secret, received!)).toBe(true);

      // So does the console's delivery page: in its summary and on the attempt's row.
      const user = await createUser(stack.em(), { companyId: erp.companyId, email: `ops-${randomUUID()}@example.com`, name: 'Ops', role: 'viewer' });
      const operator = new ConsoleClient(stack.baseUrl);
      await operator.signIn(user.user.email, user.password);
      const page = await operator.get(`/console/deliveries/${deliveryId}`);
      expect(page.text.split(`<code>${traceId}</code>`)).toHaveLength(3);

      // Turning tracing off again: the traced run replays with the workflow code bundled without the interceptors.
      await Worker.runReplayHistory({ workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! } }, { events: await historyOf(stack, deliveryId) }, deliveryWorkflowId(deliveryId));
    });

    it('replays a delivery run recorded without tracing with the traced workflow code', async () => {
      // Recorded before tracing existed (and before plans were local activities): a 503, a hold, a wake-up, then delivered.
      const json = JSON.parse(readFileSync(path.join(__dirname, '../workflows/histories/webhook-delivery-remote-plan.json'), 'utf8'));
      await Worker.runReplayHistory(
        { workflowBundle: { codePath: tracedBundlePath }, sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) } },
        historyFromJSON(json),
        'webhook-delivery/00000000-0000-4000-8000-00000000a001',
      );
    });

    it('keeps keys, secrets, bodies and query strings out of every span', async () => {
      const name = `Quiet Customer ${randomUUID()}`;
      const email = `${randomUUID()}@customers.example`;
      expect((await sendInbound(stack.baseUrl, erp, envelope('customer.created', { name, email }))).status).toBe(200);
      // A filter in a query string, which the request's span and the query's must leave out.
      const list = await request(stack.baseUrl, 'GET', `/api/v1/customers?name=${encodeURIComponent(name)}`, { key: erp.key });
      expect(list.body.data).toHaveLength(1);
      await subscriberHook.waitForRequests(2);
      await waitFor(async () => {
        await tracing.flush();
        return otlp.spans.some((span) => span.attributes['http.target'] === '/api/v1/customers');
      });

      const secrets = { 'the ERP key': erp.key, "the subscriber's key": subscriber.key, 'the inbound signing secret': erp.signingSecret, "the endpoint's secret": endpoint.secret, 'the name in the body and the filter': name, 'the email in the body': email, "the endpoint URL's token": urlToken };
      expect(otlp.spans.length).toBeGreaterThan(10);
      for (const span of otlp.spans) {
        const said = everythingSaid(span);
        const leaked = Object.entries(secrets).filter(([, value]) => said.includes(value));
        expect({ span: span.name, leaked: leaked.map(([what]) => what) }).toEqual({ span: span.name, leaked: [] });
      }
    });

    it("continues the caller's trace when a request carries its traceparent", async () => {
      const callerTraceId = randomBytes(16).toString('hex');
      const callerSpanId = randomBytes(8).toString('hex');
      const response = await request(stack.baseUrl, 'GET', '/api/v1/customers?limit=1', { key: erp.key, headers: { traceparent: `00-${callerTraceId}-${callerSpanId}-01` } });
      expect(response.status).toBe(200);
      const spans = await traceOf(tracing, otlp, callerTraceId, (found) => found.some((span) => span.kind === SERVER));
      const requestSpan = spans.find((span) => span.kind === SERVER)!;
      expect(requestSpan).toMatchObject({ name: 'GET /api/v1/customers', parentSpanId: callerSpanId, attributes: expect.objectContaining({ 'http.method': 'GET', 'http.target': '/api/v1/customers' }) });
      expect(Number(requestSpan.attributes['http.status_code'])).toBe(200);
    });

    it('links a re-run by hand to the trace of the delivery it re-runs', async () => {
      failing = true;
      expect((await sendInbound(stack.baseUrl, erp, envelope('customer.created', { name: `Rerun Customer ${randomUUID()}` }))).status).toBe(200);
      const [first] = await waitFor(async () => {
        const rows = await stack.em().execute<{ id: string; traceparent: string }[]>(
          `select d.id, d.traceparent from webhook_deliveries d where d.endpoint_id = ? and d.status = 'failed'`,
          [endpoint.id],
        );
        return rows.length > 0 ? rows : null;
      });
      const originalTraceId = first!.traceparent.split('-')[1];
      failing = false;

      const rerun = await request(stack.baseUrl, 'POST', `/api/v1/webhook-deliveries/${first!.id}/retry`, { key: subscriber.key, body: { reason: 'endpoint fixed' } });
      expect(rerun.status).toBe(200);
      expect(rerun.body.trace_id).toBe(originalTraceId);

      const rerunSpan = await waitFor(async () => {
        await tracing.flush();
        return otlp.spans.find((span) => span.name === 'webhook delivery rerun' && span.attributes['webhook.delivery_id'] === first!.id);
      });
      expect(rerunSpan.traceId).not.toBe(originalTraceId);
      expect(rerunSpan.links).toEqual([expect.objectContaining({ traceId: originalTraceId })]);
      const rerunTrace = await traceOf(tracing, otlp, rerunSpan.traceId, (found) => found.some((span) => span.kind === SERVER));
      const requestSpan = rerunTrace.find((span) => span.kind === SERVER)!;
      expect(String(requestSpan.attributes['http.route'])).toMatch(/\/webhook-deliveries\/.+\/retry$/);
      expect(ancestry(rerunTrace, rerunSpan).at(-1)).toBe(requestSpan);
    });

    it('gives a multi-step workflow a span with its company, its run in the same trace', async () => {
      const code = `P-${randomUUID().slice(0, 8)}`;
      expect([200, 202]).toContain((await sendInbound(stack.baseUrl, erp, envelope('project.created', projectData(code)))).status);
      const operation = await waitFor(async () => {
        await tracing.flush();
        return otlp.spans.find((span) => span.name === 'projectCreation' && span.attributes['company.id'] === erp.companyId);
      });
      const spans = await traceOf(tracing, otlp, operation.traceId, (found) => named(found, 'RunWorkflow:projectCreation').length > 0);
      const [run] = named(spans, 'RunWorkflow:projectCreation');
      expect(run!.attributes['company.id']).toBe(erp.companyId);
      expect(ancestry(spans, run!)).toContain(operation);
      expect(spans.map(everythingSaid).join('\n')).not.toContain('ops@northwind.example');
    });

    it('sends and stores the W3C trace context it continues, tracestate included', () => {
      const stored = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'vendor=value,other=x' };
      expect(context.with(contextOf(stored), () => traceHeaders())).toEqual({ traceparent: stored.traceparent, tracestate: stored.tracestate });
      expect(context.with(contextOf(stored), () => traceContextOf())).toEqual(stored);
      expect(traceHeaders()).toEqual({});
    });

    it('writes the active trace and span ids into the JSON logs', async () => {
      const { logger, lines } = capturedLogger('info');
      const ids = await inSpan('logging', {}, async (span) => {
        logger.info('inside a span');
        return span.spanContext();
      });
      logger.info('outside');
      const [inside, outside] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(inside).toMatchObject({ msg: 'inside a span', trace_id: ids.traceId, span_id: ids.spanId });
      expect(outside).not.toHaveProperty('trace_id');
      expect(otlp.contentTypes.length).toBeGreaterThan(0);
      expect(new Set(otlp.contentTypes.map((type) => type.split(';')[0]))).toEqual(new Set([protocol === 'http/json' ? 'application/json' : 'application/x-protobuf']));
    });
  });
});
