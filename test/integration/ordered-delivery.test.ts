import { DELIVERY_HELD } from '../../workflows/search-attributes';
import { deliveryWorkflowId } from '../../workflows/webhook-delivery.contract';
import { startReceiver, testCertificate, type ReceivedRequest, type TestReceiver } from '../helpers/https-receiver';
import { spawnEntryPoint, stopProcess, waitFor, workerStarted } from '../helpers/processes';
import { createTenant, envelope, processEnvOf, request, sendInbound, startStack, testConfig, type Tenant, type TestStack } from '../helpers/stack';
import { addApiKey, registerEndpoint, waitForDeliveryStatus } from '../helpers/webhooks';

let seq = 0;
const nextNumber = () => `ORD-${++seq}`;
const created = (empNumber: string) => envelope('employee.created', { emp_number: empNumber, name: 'Order Test', email: 'o@example.com', employee_type: 'office' });
const updated = (empNumber: string, phone: string) => envelope('employee.updated', { emp_number: empNumber, phone });

/** What a received delivery is about: its event type, its employee's number and phone. */
function aboutOf(received: ReceivedRequest): { type: string; emp: string; phone: string | undefined; id: string } {
  const body = JSON.parse(received.body) as { event_type: string; data: { emp_number: string; phone?: string } };
  return { type: body.event_type, emp: body.data.emp_number, phone: body.data.phone, id: String(received.headers['x-webhook-id']) };
}

/** The first request about which `test` holds, by its place among `requests`; -1 when none. */
const indexWhere = (requests: ReceivedRequest[], test: (about: ReturnType<typeof aboutOf>) => boolean) => requests.findIndex((r) => test(aboutOf(r)));

/** The list, or undefined while it is empty (for waitFor). */
const nonEmpty = <T>(list: T[]): T[] | undefined => (list.length ? list : undefined);

describe('ordered delivery per record', () => {
  let stack: TestStack;
  let sender: Tenant;
  let subscriber: Tenant;
  const receivers: TestReceiver[] = [];

  async function receiver(): Promise<TestReceiver> {
    const r = await startReceiver();
    receivers.push(r);
    return r;
  }

  beforeAll(async () => {
    stack = await startStack({ config: await testConfig({ WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1', WEBHOOK_TIMEOUT_MS: '4000' }) });
    sender = await createTenant(stack.orm, ['admin']);
    subscriber = await addApiKey(stack, sender);
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await stack.close();
  });

  /** Employees created (and their creations delivered, so that they are nobody's predecessors any more). */
  async function employees(hook: TestReceiver, count: number): Promise<string[]> {
    const numbers = Array.from({ length: count }, nextNumber);
    for (const number of numbers) expect((await sendInbound(stack.baseUrl, sender, created(number))).status).toBe(200);
    await waitFor(async () => numbers.every((n) => hook.requests.some((r) => aboutOf(r).emp === n && r.answeredAt !== undefined)), 30_000, 'the creations delivered');
    return numbers;
  }

  const deliveryOf = (received: ReceivedRequest) => request(stack.baseUrl, 'GET', `/api/v1/webhook-deliveries/${aboutOf(received).id}`, { key: subscriber.key });

  it('is none by default, per_record when asked, and an unknown value is a 400 naming the field', async () => {
    const hook = await receiver();
    const plain = await request(stack.baseUrl, 'POST', '/api/v1/webhook-endpoints', { key: subscriber.key, body: { url: hook.url, event_types: ['employee.*'] } });
    expect(plain.status).toBe(201);
    expect(plain.body.ordering).toBe('none');

    const bad = await request(stack.baseUrl, 'POST', '/api/v1/webhook-endpoints', { key: subscriber.key, body: { url: hook.url, event_types: ['employee.*'], ordering: 'fifo' } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('ordering');
    const badUpdate = await request(stack.baseUrl, 'PUT', `/api/v1/webhook-endpoints/${plain.body.id}`, { key: subscriber.key, body: { ordering: 'per_event' } });
    expect(badUpdate.status).toBe(400);
    expect(JSON.stringify(badUpdate.body)).toContain('ordering');

    const ordered = await request(stack.baseUrl, 'PUT', `/api/v1/webhook-endpoints/${plain.body.id}`, { key: subscriber.key, body: { ordering: 'per_record' } });
    expect(ordered.status).toBe(200);
    expect(ordered.body.ordering).toBe('per_record');
    expect((await request(stack.baseUrl, 'GET', `/api/v1/webhook-endpoints/${plain.body.id}`, { key: subscriber.key })).body.ordering).toBe('per_record');
    await request(stack.baseUrl, 'DELETE', `/api/v1/webhook-endpoints/${plain.body.id}`, { key: subscriber.key });
  }, 60_000);

  it("a record's second update waits, held, for its first to get through its 503s; another record's goes at once", async () => {
    const hook = await receiver();
    const endpoint = await registerEndpoint(stack, subscriber.key, { url: hook.url, event_types: ['employee.*'], ordering: 'per_record' });
    let refused = 0;
    hook.respondWith((received) => {
      const about = aboutOf(received);
      if (about.type === 'employee.updated' && about.phone === '+1 403 555 0001' && refused < 2) {
        refused++;
        return { status: 503, body: 'deploying' };
      }
      return { status: 200 };
    });
    const [stuck, other] = await employees(hook, 2);
    const before = hook.requests.length;

    expect((await sendInbound(stack.baseUrl, sender, updated(stuck!, '+1 403 555 0001'))).status).toBe(200);
    expect((await sendInbound(stack.baseUrl, sender, updated(stuck!, '+1 403 555 0002'))).status).toBe(200);
    expect((await sendInbound(stack.baseUrl, sender, updated(other!, '+1 403 555 0003'))).status).toBe(200);

    // The other record's update does not wait for the stuck one.
    await waitFor(async () => hook.requests.slice(before).some((r) => aboutOf(r).emp === other), 15_000, "the other record's update");
    // The second update waits, held, visible in REST and in the Temporal UI.
    const second = await waitFor(async () => {
      const [row] = await stack.em().execute<{ id: string }[]>(
        `select id from webhook_deliveries where endpoint_id = ? and held_reason = 'awaiting_predecessor' and held_until is not null`,
        [endpoint.id],
      );
      return row?.id;
    }, 15_000, 'the second update held');
    const shown = await request(stack.baseUrl, 'GET', `/api/v1/webhook-deliveries/${second}`, { key: subscriber.key });
    // Unless the first got through since: then it is on its way.
    if (shown.body.status === 'pending' && hook.requests.filter((r) => aboutOf(r).phone === '+1 403 555 0001').length < 3) {
      expect(shown.body).toMatchObject({ held_reason: 'awaiting_predecessor', record_key: expect.stringMatching(/^employee:/), attempt_count: 0 });
    }
    await waitFor(async () => {
      const { typedSearchAttributes } = await stack.temporal.workflow.getHandle(deliveryWorkflowId(second)).describe();
      return typedSearchAttributes.get(DELIVERY_HELD) === 'awaiting_predecessor' || hook.requests.some((r) => aboutOf(r).id === second);
    }, 15_000, 'the held delivery marked in the Temporal UI');

    await waitFor(async () => hook.requests.some((r) => aboutOf(r).phone === '+1 403 555 0002'), 30_000, 'the second update');
    const requests = hook.requests.slice(before);
    const firstDelivered = indexWhere(requests, (a) => a.phone === '+1 403 555 0001') + 2;
    expect(requests.filter((r) => aboutOf(r).phone === '+1 403 555 0001')).toHaveLength(3);
    expect(aboutOf(requests[firstDelivered]!).phone).toBe('+1 403 555 0001');
    expect(indexWhere(requests, (a) => a.phone === '+1 403 555 0002')).toBeGreaterThan(firstDelivered);
    expect(indexWhere(requests, (a) => a.emp === other)).toBeLessThan(firstDelivered);
    // Once, each: the held one used none of its attempts while it waited.
    expect(requests.filter((r) => aboutOf(r).phone === '+1 403 555 0002')).toHaveLength(1);
    const delivered = await waitForDeliveryStatus(stack, subscriber.key, second, ['delivered']);
    expect(delivered).toMatchObject({ attempt_count: 1, held_reason: null });
  }, 90_000);

  it('a first update that fails for good lets the second go on, and keeps its alert', async () => {
    const hook = await receiver();
    const endpoint = await registerEndpoint(stack, subscriber.key, { url: hook.url, event_types: ['employee.*'], ordering: 'per_record' });
    hook.respondWith((received) => (aboutOf(received).phone === '+1 403 555 0101' ? { status: 422, body: 'rejected' } : { status: 200 }));
    const [number] = await employees(hook, 1);

    expect((await sendInbound(stack.baseUrl, sender, updated(number!, '+1 403 555 0101'))).status).toBe(200);
    expect((await sendInbound(stack.baseUrl, sender, updated(number!, '+1 403 555 0102'))).status).toBe(200);
    const [second] = await waitFor(async () => nonEmpty(hook.requests.filter((r) => aboutOf(r).phone === '+1 403 555 0102')), 30_000, 'the second update');
    const first = hook.requests.find((r) => aboutOf(r).phone === '+1 403 555 0101')!;
    expect(first.receivedAt).toBeLessThan(second!.receivedAt);
    expect((await deliveryOf(first)).body.status).toBe('failed');
    const alerts = await request(stack.baseUrl, 'GET', `/api/v1/webhook-alerts?status=open`, { key: subscriber.key });
    expect(alerts.body.data).toEqual(expect.arrayContaining([expect.objectContaining({ delivery_id: aboutOf(first).id, endpoint_id: endpoint.id, resolved_at: null })]));
  }, 60_000);

  it('ordering turned to none while a delivery waits for its predecessor: it goes at once', async () => {
    const hook = await receiver();
    const endpoint = await registerEndpoint(stack, subscriber.key, { url: hook.url, event_types: ['employee.*'], ordering: 'per_record' });
    hook.respondWith((received) => (aboutOf(received).phone === '+1 403 555 0201' ? { status: 200, hang: true } : { status: 200 }));
    const [number] = await employees(hook, 1);

    expect((await sendInbound(stack.baseUrl, sender, updated(number!, '+1 403 555 0201'))).status).toBe(200);
    await waitFor(async () => hook.requests.some((r) => aboutOf(r).phone === '+1 403 555 0201'), 15_000, 'the first update, hanging');
    expect((await sendInbound(stack.baseUrl, sender, updated(number!, '+1 403 555 0202'))).status).toBe(200);
    await waitFor(async () => {
      const [row] = await stack.em().execute<{ n: string }[]>(`select count(*) as n from webhook_deliveries where endpoint_id = ? and held_reason = 'awaiting_predecessor'`, [endpoint.id]);
      return Number(row!.n) === 1;
    }, 15_000, 'the second update held');

    const changed = await request(stack.baseUrl, 'PUT', `/api/v1/webhook-endpoints/${endpoint.id}`, { key: subscriber.key, body: { ordering: 'none' } });
    expect(changed.status).toBe(200);
    const [second] = await waitFor(async () => nonEmpty(hook.requests.filter((r) => aboutOf(r).phone === '+1 403 555 0202')), 10_000, 'the second update, released');
    // Before the first's attempt timed out (4 s) and was retried.
    expect(hook.requests.filter((r) => aboutOf(r).phone === '+1 403 555 0201')).toHaveLength(1);
    expect(second).toBeDefined();
  }, 60_000);
});

describe('ordered delivery per record across a worker killed mid-attempt', () => {
  it("the record's next update is not sent before the killed attempt is made again and delivered", async () => {
    const hook = await startReceiver();
    const stack = await startStack({ worker: false, dispatcher: true });
    const env = { ...processEnvOf(stack), WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2,0.2,0.2', NODE_EXTRA_CA_CERTS: testCertificate().certFile };
    const first = spawnEntryPoint('worker/main.ts', env);
    let second: ReturnType<typeof spawnEntryPoint> | undefined;
    try {
      const sender = await createTenant(stack.orm, ['admin']);
      const subscriber = await addApiKey(stack, sender);
      await registerEndpoint(stack, subscriber.key, { url: hook.url, event_types: ['employee.*'], ordering: 'per_record' });
      let hung = false;
      hook.respondWith((received) => {
        if (aboutOf(received).phone === '+1 403 555 0301' && !hung) {
          hung = true;
          return { status: 200, hang: true };
        }
        return { status: 200 };
      });
      await workerStarted(first, 'first');
      const number = nextNumber();
      expect((await sendInbound(stack.baseUrl, sender, created(number))).status).toBe(200);
      await waitFor(async () => hook.requests.some((r) => aboutOf(r).type === 'employee.created' && r.answeredAt !== undefined), 30_000, 'the creation delivered');
      expect((await sendInbound(stack.baseUrl, sender, updated(number, '+1 403 555 0301'))).status).toBe(200);
      const [inFlight] = await waitFor(async () => nonEmpty(hook.requests.filter((r) => aboutOf(r).phone === '+1 403 555 0301')), 30_000, 'the first update, hanging');
      expect((await sendInbound(stack.baseUrl, sender, updated(number, '+1 403 555 0302'))).status).toBe(200);
      const workflow = stack.temporal.workflow.getHandle(deliveryWorkflowId(aboutOf(inFlight!).id));
      await waitFor(async () => (await workflow.describe()).raw.pendingActivities?.[0]?.lastHeartbeatTime, 15_000, 'a heartbeat of the attempt');
      await stopProcess(first, 'SIGKILL');

      second = spawnEntryPoint('worker/main.ts', env);
      await workerStarted(second, 'second');
      await waitFor(async () => hook.requests.some((r) => aboutOf(r).phone === '+1 403 555 0302'), 90_000, 'the second update');
      const updates = hook.requests.filter((r) => aboutOf(r).type === 'employee.updated').map((r) => aboutOf(r).phone);
      // The first again (same X-Webhook-ID), answered, and only then the second: once each after the kill.
      expect(updates).toEqual(['+1 403 555 0301', '+1 403 555 0301', '+1 403 555 0302']);
      const firstAgain = hook.requests.filter((r) => aboutOf(r).phone === '+1 403 555 0301')[1]!;
      expect(aboutOf(firstAgain).id).toBe(aboutOf(inFlight!).id);
      expect(firstAgain.answeredAt).toBeLessThanOrEqual(hook.requests.find((r) => aboutOf(r).phone === '+1 403 555 0302')!.receivedAt);
    } finally {
      await stopProcess(first, 'SIGKILL');
      if (second) await stopProcess(second);
      await hook.close();
      await stack.close();
    }
  }, 300_000);
});
