import { deliveryWorkflowId } from '../../workflows/webhook-delivery.contract';
import { projectData } from '../helpers/fixtures';
import { startReceiver, type TestReceiver } from '../helpers/https-receiver';
import { freePort } from '../helpers/ports';
import { waitFor } from '../helpers/processes';
import { createTenant, envelope, request, sendInbound, startStack, testConfig, type Tenant, type TestStack } from '../helpers/stack';
import { temporalCli } from '../helpers/temporal-cli';
import { addApiKey, deliveriesOf, deliveryIdsOf, registerEndpoint, verifiedAsReceiver, waitForDeliveryStatus } from '../helpers/webhooks';

let employeeSeq = 0;
const employee = (overrides: Record<string, unknown> = {}) =>
  envelope('employee.created', { emp_number: `EMP-${++employeeSeq}`, name: 'Dana Builder', email: 'dana@example.com', employee_type: 'site_worker', ...overrides });

describe('outbound webhook deliveries', () => {
  let stack: TestStack;
  let sender: Tenant; // makes the changes
  let subscriber: Tenant; // another key of the same company, owning the endpoints
  const receivers: TestReceiver[] = [];

  async function receiver(port?: number): Promise<TestReceiver> {
    const r = await startReceiver(port ? { port } : undefined);
    receivers.push(r);
    return r;
  }

  beforeAll(async () => {
    stack = await startStack({ config: await testConfig({ WEBHOOK_TIMEOUT_MS: '1500' }) });
    sender = await createTenant(stack.orm, ['admin']);
    subscriber = await addApiKey(stack, sender);
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await stack.close();
  });

  it('retries 500s on the schedule and delivers, every attempt with the same X-Webhook-ID and a valid signature', async () => {
    const hook = await receiver();
    hook.respondWith((_, i) => (i < 2 ? { status: 500, body: 'temporarily broken' } : { status: 200, body: '{"received":true}' }));
    const endpoint = await registerEndpoint(stack, subscriber.key, { url: hook.url, event_types: ['employee.*'] });

    const sent = await sendInbound(stack.baseUrl, sender, employee({ name: 'Retry Case' }));
    expect(sent.status).toBe(200);
    const requests = await hook.waitForRequests(3);

    const ids = new Set(requests.map((r) => r.headers['x-webhook-id']));
    expect(ids.size).toBe(1);
    expect(requests.map((r) => r.headers['x-webhook-retry'])).toEqual(['0', '1', '2']);
    expect(requests.every((r) => r.headers['x-webhook-event'] === 'employee.created')).toBe(true);
    expect(requests.every((r) => r.headers['content-type'] === 'application/json')).toBe(true);
    expect(requests.every((r) => verifiedAsReceiver(endpoint.secret, r))).toBe(true);
    expect(new Set(requests.map((r) => r.body)).size).toBe(1);
    expect(verifiedAsReceiver('whsec_someone_else', requests[0]!)).toBe(false);
    expect(verifiedAsReceiver(endpoint.secret, { ...requests[0]!, body: requests[0]!.body.replace('Retry Case', 'Forged') })).toBe(false);

    const body = JSON.parse(requests[0]!.body);
    expect(body).toEqual({ event_id: sent.body.event_id, event_type: 'employee.created', timestamp: expect.any(String), company_id: sender.companyId, data: expect.any(Object) });
    expect(body.data).toMatchObject({ id: sent.body.record_id, name: 'Retry Case', is_site_worker: true });

    const [deliveryId] = [...ids] as string[];
    const delivery = await waitForDeliveryStatus(stack, subscriber.key, deliveryId!, ['delivered']);
    expect(delivery).toMatchObject({ endpoint_id: endpoint.id, event_id: sent.body.event_id, event_type: 'employee.created', attempt_count: 3, last_status_code: 200 });
    expect(delivery.attempts.map((a: any) => [a.attempt_number, a.status_code, a.outcome])).toEqual([
      [0, 500, 'retryable_failure'],
      [1, 500, 'retryable_failure'],
      [2, 200, 'succeeded'],
    ]);
    expect(delivery.attempts[0]).toMatchObject({ trigger: 'automatic', error: 'HTTP 500', response_excerpt: 'temporarily broken', duration_ms: expect.any(Number) });
    expect(delivery.attempts[2].response_excerpt).toBe('{"received":true}');

    // The workflow records the outcome in the database first and in its search attributes right after.
    const handle = stack.temporal.workflow.getHandle(deliveryWorkflowId(deliveryId!));
    const description = await waitFor(
      async () => {
        const described = await handle.describe();
        return described.typedSearchAttributes.getAll().some((p) => p.key.name === 'DeliveryStatus' && p.value === 'delivered') && described;
      },
      10_000,
      'the DeliveryStatus search attribute',
    );
    expect(description.typedSearchAttributes.getAll().map((p) => [p.key.name, p.value])).toEqual(
      expect.arrayContaining([
        ['CompanyId', sender.companyId],
        ['EndpointId', endpoint.id],
        ['EventType', 'employee.created'],
        ['DeliveryStatus', 'delivered'],
      ]),
    );
    expect(await description.staticSummary()).toBe(`employee.created → ${hook.url}`);
  });

  it('treats a 4xx as permanent: one attempt, failed, alert raised, no retry', async () => {
    const hook = await receiver();
    hook.respondWith(() => ({ status: 400, body: '{"error":"bad payload"}' }));
    const endpoint = await registerEndpoint(stack, subscriber.key, { url: hook.url, event_types: ['employee.created'] });
    await sendInbound(stack.baseUrl, sender, employee());
    const [first] = await hook.waitForRequests(1);
    const deliveryId = String(first!.headers['x-webhook-id']);

    const delivery = await waitForDeliveryStatus(stack, subscriber.key, deliveryId, ['failed']);
    expect(delivery.attempts).toEqual([expect.objectContaining({ attempt_number: 0, status_code: 400, outcome: 'permanent_failure', response_excerpt: '{"error":"bad payload"}' })]);
    // Well past the whole retry schedule (5 × 0.2 s): still the one request.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(hook.requests).toHaveLength(1);

    const alerts = await request(stack.baseUrl, 'GET', '/api/v1/webhook-alerts', { key: subscriber.key });
    expect(alerts.body.data).toContainEqual(expect.objectContaining({ delivery_id: deliveryId, endpoint_id: endpoint.id, attempt_count: 1, message: expect.stringContaining('HTTP 400') }));
  });

  it('retries an attempt that hangs past the timeout', async () => {
    const hook = await receiver();
    hook.respondWith((_, i) => (i === 0 ? { status: 200, hang: true } : { status: 200 }));
    await registerEndpoint(stack, subscriber.key, { url: hook.url, event_types: ['employee.created'] });
    await sendInbound(stack.baseUrl, sender, employee());
    const requests = await hook.waitForRequests(2);
    expect(requests[0]!.headers['x-webhook-id']).toBe(requests[1]!.headers['x-webhook-id']);
    expect(requests.map((r) => r.headers['x-webhook-retry'])).toEqual(['0', '1']);

    const delivery = await waitForDeliveryStatus(stack, subscriber.key, String(requests[0]!.headers['x-webhook-id']), ['delivered']);
    expect(delivery.attempts[0]).toMatchObject({ outcome: 'retryable_failure', status_code: null, error: 'timed out after 1500 ms' });
    expect(delivery.attempts[0].duration_ms).toBeGreaterThanOrEqual(1400);
  });

  describe('an endpoint that is down for all six attempts', () => {
    async function failedDelivery(): Promise<{ port: number; endpointId: string; deliveryId: string; secret: string }> {
      // Nothing listens there yet: the endpoint is down.
      const port = await freePort();
      const endpoint = await registerEndpoint(stack, subscriber.key, { url: `https://localhost:${port}/hook`, event_types: ['employee.created'] });
      await sendInbound(stack.baseUrl, sender, employee());
      const [deliveryId] = await waitFor(async () => {
        const ids = await deliveryIdsOf(stack, endpoint.id);
        return ids.length ? ids : null;
      });
      const failed = await waitForDeliveryStatus(stack, subscriber.key, deliveryId!, ['failed']);
      expect(failed.attempt_count).toBe(6);
      expect(failed.attempts.map((a: any) => a.attempt_number)).toEqual([0, 1, 2, 3, 4, 5]);
      expect(failed.attempts.every((a: any) => a.outcome === 'retryable_failure' && a.error.includes('ECONNREFUSED'))).toBe(true);
      const alerts = await request(stack.baseUrl, 'GET', '/api/v1/webhook-alerts', { key: subscriber.key });
      expect(alerts.body.data).toContainEqual(expect.objectContaining({ delivery_id: deliveryId, attempt_count: 6 }));
      return { port, endpointId: endpoint.id, deliveryId: deliveryId!, secret: endpoint.secret };
    }

    it('is failed with an alert, then re-run through REST with the same X-Webhook-ID', async () => {
      const { port, deliveryId, secret } = await failedDelivery();
      const hook = await receiver(port);

      const retried = await request(stack.baseUrl, 'POST', `/api/v1/webhook-deliveries/${deliveryId}/retry`, { key: subscriber.key, body: { reason: 'endpoint back up' } });
      // The answer comes once the re-run's attempt is made, and shows it.
      expect(retried.status).toBe(200);
      expect(retried.body).toMatchObject({ status: 'delivered', attempt_count: 7, last_status_code: 200 });
      const [delivered] = await hook.waitForRequests(1);
      expect(delivered!.headers['x-webhook-id']).toBe(deliveryId);
      expect(delivered!.headers['x-webhook-retry']).toBe('6');
      expect(verifiedAsReceiver(secret, delivered!)).toBe(true);

      const delivery = await waitForDeliveryStatus(stack, subscriber.key, deliveryId, ['delivered']);
      expect(delivery.attempts.at(-1)).toMatchObject({ attempt_number: 6, trigger: 'manual', outcome: 'succeeded', status_code: 200 });

      const again = await request(stack.baseUrl, 'POST', `/api/v1/webhook-deliveries/${deliveryId}/retry`, { key: subscriber.key });
      expect(again.status).toBe(409);
      expect(again.body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'status' } });
    });

    it('is found by search attributes and re-run with the rerun update as the Temporal UI sends it', async () => {
      const { port, endpointId, deliveryId } = await failedDelivery();
      const hook = await receiver(port);

      // What an operator types into the UI's search box: the open failed deliveries, those waiting for a re-run.
      const query = `CompanyId = "${sender.companyId}" AND EndpointId = "${endpointId}" AND EventType = "employee.created" AND ExecutionStatus = "Running" AND DeliveryStatus = "failed"`;
      const found = await waitFor(async () => {
        const ids: string[] = [];
        for await (const execution of stack.temporal.workflow.list({ query })) ids.push(execution.workflowId);
        return ids.length ? ids : null;
      });
      expect(found).toEqual([deliveryWorkflowId(deliveryId)]);

      // The UI lists the workflow's updates with their descriptions from this built-in query.
      const handle = stack.temporal.workflow.getHandle(found[0]!);
      const metadata = await handle.query<{ definition: { updateDefinitions: { name: string; description: string }[] } }>('__temporal_workflow_metadata');
      expect(metadata.definition.updateDefinitions).toContainEqual({ name: 'rerun', description: expect.stringContaining('X-Webhook-ID') });

      // The UI sends an update's input as JSON, as the CLI does, and shows its result: the attempt made.
      const update = await temporalCli(stack.config.temporal.address, [
        'workflow', 'update', 'execute', '--workflow-id', found[0]!, '--name', 'rerun', '--input', '{"reason": "fixed the receiver"}', '--output', 'json',
      ]);
      expect(update.stderr).toBe('');
      expect(update.code).toBe(0);
      expect(update.stdout).toContain('"delivered": true');

      const [delivered] = await hook.waitForRequests(1);
      expect(delivered!.headers['x-webhook-id']).toBe(deliveryId);
      expect(delivered!.headers['x-webhook-retry']).toBe('6');
      await waitForDeliveryStatus(stack, subscriber.key, deliveryId, ['delivered']);
    });
  });

  it("does not send a change back to the originating key's endpoint, while another endpoint gets it", async () => {
    const own = await receiver();
    const other = await receiver();
    const ownEndpoint = await registerEndpoint(stack, sender.key, { url: own.url, event_types: ['employee.created'] });
    const otherEndpoint = await registerEndpoint(stack, subscriber.key, { url: other.url, event_types: ['employee.created'] });

    const sent = await sendInbound(stack.baseUrl, sender, employee({ name: 'Echo Check' }));
    const [received] = await other.waitForRequests(1);
    expect(JSON.parse(received!.body).event_id).toBe(sent.body.event_id);

    // Deliveries of one event are created together, so once the other endpoint has its, none is coming for ours.
    expect((await deliveriesOf(stack, sender.key, otherEndpoint.id)).map((d) => d.event_id)).toContain(sent.body.event_id);
    expect((await deliveriesOf(stack, sender.key, ownEndpoint.id)).map((d) => d.event_id)).not.toContain(sent.body.event_id);
    expect(own.requests.filter((r) => JSON.parse(r.body).event_id === sent.body.event_id)).toHaveLength(0);

    // A change made with the other key does reach the first endpoint.
    const back = await sendInbound(stack.baseUrl, subscriber, employee());
    const echoed = await own.waitForRequests(1);
    expect(JSON.parse(echoed.at(-1)!.body).event_id).toBe(back.body.event_id);
  });

  it('delivers employee.created and project.created in shape A and shape B', async () => {
    const company = await createTenant(stack.orm, ['admin']);
    const owner = await addApiKey(stack, company);
    const a = await receiver();
    const b = await receiver();
    await registerEndpoint(stack, owner.key, { url: a.url, event_types: ['employee.created', 'project.*', 'customer.created'] });
    await registerEndpoint(stack, owner.key, { url: b.url, event_types: ['employee.created', 'project.created', 'customer.*'], payload_shape: 'B' });

    const emp = await sendInbound(stack.baseUrl, company, employee({ name: 'Shape Person', phone: '555-0100', employee_type: 'site_lead', start_date: '2026-02-01' }));
    const proj = await sendInbound(stack.baseUrl, company, envelope('project.created', projectData('SHAPE-1')));
    expect(proj.status).toBe(200);
    const inA = await a.waitForRequests(3);
    const inB = await b.waitForRequests(3);
    const byEvent = (requests: typeof inA) => Object.fromEntries(requests.map((r) => [r.headers['x-webhook-event'], JSON.parse(r.body)]));
    const shapeA = byEvent(inA);
    const shapeB = byEvent(inB);

    expect(Object.keys(shapeA).sort()).toEqual(['customer.created', 'employee.created', 'project.created']);
    expect(shapeA['employee.created']).toEqual({
      event_id: emp.body.event_id,
      event_type: 'employee.created',
      timestamp: expect.stringMatching(/Z$/),
      company_id: company.companyId,
      data: {
        id: emp.body.record_id,
        emp_number: expect.any(String),
        name: 'Shape Person',
        email: 'dana@example.com',
        phone: '555-0100',
        role: null,
        department: null,
        employee_type: 'site_lead',
        employee_skills: [],
        start_date: '2026-02-01',
        emergency_contact_name: null,
        emergency_contact_phone: null,
        is_project_owner: false,
        is_site_lead: true,
        is_site_worker: false,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    });
    expect(Object.keys(shapeA['project.created'].data).sort()).toEqual(
      ['contacts', 'created_at', 'created_by', 'customer', 'description', 'end_date', 'id', 'location', 'priority', 'project_code', 'project_name', 'project_owners', 'start_date', 'status'].sort(),
    );
    expect(shapeA['project.created'].data).toMatchObject({ id: proj.body.record_id, project_code: 'SHAPE-1', customer: { name: 'Northwind Developments' } });

    expect(shapeB['employee.created']).toEqual({ event: 'employee.created', timestamp: expect.any(String), data: expect.any(Object) });
    expect(Object.keys(shapeB['employee.created'].data).sort()).toEqual(
      ['department', 'email', 'emergency_contact_name', 'emergency_contact_phone', 'emp_number', 'employee_skills', 'employee_type', 'id', 'name', 'phone', 'role', 'start_date'].sort(),
    );
    expect(shapeB['project.created']).toEqual({
      event: 'project.created',
      timestamp: expect.any(String),
      data: {
        id: proj.body.record_id,
        projectNumber: 'SHAPE-1',
        name: 'Tower SHAPE-1',
        customer: 'Northwind Developments',
        address: '700 Riverside Dr, Calgary, AB, T2P 1A1, CA',
        status: 'active',
        startDate: '2026-04-01',
        estimatedEndDate: '2027-06-30',
      },
    });
    // Shape B does not describe customer events: they arrive in shape A.
    expect(shapeB['customer.created']).toMatchObject({ event_type: 'customer.created', company_id: company.companyId, data: { name: 'Northwind Developments' } });
  });

  it('names work orders workorder.* in shape B', async () => {
    const company = await createTenant(stack.orm, ['admin']);
    const owner = await addApiKey(stack, company);
    const b = await receiver();
    await registerEndpoint(stack, owner.key, { url: b.url, event_types: ['workorder.*'], payload_shape: 'B' });
    await sendInbound(stack.baseUrl, company, envelope('project.created', projectData('WO-SHAPE')));
    const projects = await request(stack.baseUrl, 'GET', '/api/v1/projects', { key: company.key });
    const created = await request(stack.baseUrl, 'POST', '/api/v1/work-orders', { key: company.key, body: { title: 'Excavate', project_id: projects.body.data[0].id, priority: 'urgent' } });
    const [received] = await b.waitForRequests(1);
    expect(received!.headers['x-webhook-event']).toBe('workorder.created');
    expect(JSON.parse(received!.body)).toEqual({
      event: 'workorder.created',
      timestamp: expect.any(String),
      data: { id: created.body.id, workOrderNumber: created.body.work_order_number, title: 'Excavate', status: 'open', priority: 'urgent', projectId: projects.body.data[0].id },
    });
  });

  it('sends a test delivery on demand and records it like any other', async () => {
    const hook = await receiver();
    const endpoint = await registerEndpoint(stack, subscriber.key, { url: hook.url, event_types: ['*'] });
    const response = await request(stack.baseUrl, 'POST', `/api/v1/webhook-endpoints/${endpoint.id}/test`, { key: subscriber.key });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ endpoint_id: endpoint.id, event_type: 'webhook.test', is_test: true, status: 'delivered', attempt_count: 1 });
    expect(response.body.attempts).toEqual([expect.objectContaining({ attempt_number: 0, trigger: 'test', outcome: 'succeeded', status_code: 200 })]);
    const [received] = hook.requests;
    expect(received!.headers['x-webhook-id']).toBe(response.body.id);
    expect(received!.headers['x-webhook-event']).toBe('webhook.test');
    expect(verifiedAsReceiver(endpoint.secret, received!)).toBe(true);
    expect((await deliveriesOf(stack, subscriber.key, endpoint.id)).map((d) => d.id)).toContain(response.body.id);
  });

  it('lists deliveries with filters and keeps them to their company', async () => {
    const hook = await receiver();
    const endpoint = await registerEndpoint(stack, subscriber.key, { url: hook.url, event_types: ['employee.created'] });
    await sendInbound(stack.baseUrl, sender, employee());
    await hook.waitForRequests(1);
    const [deliveryId] = await deliveryIdsOf(stack, endpoint.id);
    const delivery = await waitForDeliveryStatus(stack, subscriber.key, deliveryId!, ['delivered']);

    const filtered = await request(stack.baseUrl, 'GET', `/api/v1/webhook-deliveries?endpoint_id=${endpoint.id}&status=delivered&event_type=employee.created`, { key: subscriber.key });
    expect(filtered.body.data.map((d: any) => d.id)).toEqual([delivery.id]);
    expect(filtered.body.pagination).toEqual({ limit: 50, offset: 0, total: 1, next_cursor: null, next_after: null });
    const attempts = await request(stack.baseUrl, 'GET', `/api/v1/webhook-deliveries/${delivery.id}/attempts`, { key: subscriber.key });
    expect(attempts.body.data).toHaveLength(1);
    expect((await request(stack.baseUrl, 'GET', '/api/v1/webhook-deliveries?status=lost', { key: subscriber.key })).status).toBe(400);

    const stranger = await createTenant(stack.orm, ['admin']);
    expect((await request(stack.baseUrl, 'GET', `/api/v1/webhook-deliveries/${delivery.id}`, { key: stranger.key })).status).toBe(404);
    expect((await request(stack.baseUrl, 'POST', `/api/v1/webhook-deliveries/${delivery.id}/retry`, { key: stranger.key })).status).toBe(404);
    const reader = await addApiKey(stack, sender, ['projects:read']);
    expect((await request(stack.baseUrl, 'GET', '/api/v1/webhook-deliveries', { key: reader.key })).status).toBe(403);
  });
});
