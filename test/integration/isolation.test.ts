import { startReceiver, type ReceivedRequest, type TestReceiver } from '../helpers/https-receiver';
import { inboundSender, restClient } from '../helpers/api-client';
import { projectData, seedProject } from '../helpers/fixtures';
import { freePort } from '../helpers/ports';
import { waitFor } from '../helpers/processes';
import { createUser } from '../../src/console/users/users-service';
import { DELIVERY_HELD } from '../../workflows/search-attributes';
import { ConsoleClient } from '../helpers/console';
import { createTenant, envelope, request, sendInbound, startStack, type Tenant, testConfig, type TestStack } from '../helpers/stack';
import { addApiKey, registerEndpoint, type RegisteredEndpoint, waitForDeliveryStatus } from '../helpers/webhooks';

let seq = 0;
const employeeData = (prefix: string) => ({ emp_number: `${prefix}-${++seq}`, name: 'Dana Builder', email: 'dana@example.com', employee_type: 'site_worker' });
const employee = (prefix: string) => envelope('employee.created', employeeData(prefix));

/** Receipts a receiver answered with 200, by X-Webhook-ID. */
function answeredOnce(answered: string[]): boolean {
  return new Set(answered).size === answered.length;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** A company whose one endpoint's port refuses connections, and `events` employee.created pushed into it. */
async function refusingEndpointWithEvents(stack: TestStack, events: number, prefix: string) {
  const company = await createTenant(stack.orm, ['admin']);
  const subscriber = await addApiKey(stack, company);
  const port = await freePort();
  const endpoint = await registerEndpoint(stack, subscriber.key, { url: `https://localhost:${port}/hook`, event_types: ['employee.created'] });
  const erp = inboundSender(stack, company);
  for (let i = 0; i < events; i++) expect((await erp.send('employee.created', employeeData(prefix))).status).toBe(200);
  return { company, subscriber, port, endpoint };
}

/**
 * Issue 25's scenario, on real PostgreSQL and Temporal with the default attempt deadline (30 s), per-endpoint cap (4)
 * and breaker threshold (5): one company's three hanging and two refusing endpoints get a burst of 60 records (300
 * failing deliveries); another company is not slowed, and nothing is lost when the endpoints come back.
 */
describe('isolation: one company with dead endpoints does not slow another', () => {
  let stack: TestStack;
  const receivers: TestReceiver[] = [];

  beforeAll(async () => {
    // Breaker cool-downs of seconds (the default 30 s to 10 min would only make the test wait); retries 20 s apart,
    // longer than a cool-down, as the real schedule's are.
    stack = await startStack({
      config: await testConfig({ WEBHOOK_TIMEOUT_MS: '30000', WEBHOOK_RETRY_SCHEDULE: '20,20,20,20,20', WEBHOOK_CIRCUIT_COOLDOWN: '2', WEBHOOK_CIRCUIT_MAX_COOLDOWN: '4' }),
    });
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await stack.close();
  });

  async function receiver(port?: number): Promise<TestReceiver & { answered: string[] }> {
    const hook = Object.assign(await startReceiver(port === undefined ? {} : { port }), { answered: [] as string[] });
    receivers.push(hook);
    hook.respondWith((request: ReceivedRequest) => {
      hook.answered.push(String(request.headers['x-webhook-id']));
      return { status: 200 };
    });
    return hook;
  }

  /** Commit (the inbound 200) → receipt at B's endpoint, in ms. */
  async function deliveryLatency(tenant: Tenant, hook: TestReceiver): Promise<number> {
    const before = hook.requests.length;
    const sent = await sendInbound(stack.baseUrl, tenant, employee('B'));
    expect(sent.status).toBe(200);
    const committed = Date.now();
    const [received] = await waitFor(async () => (hook.requests.length > before ? hook.requests.slice(before) : null), 60_000, "B's delivery");
    return received!.receivedAt - committed;
  }

  it('keeps the other company fast, answers both companies at once, and delivers every held delivery once, when the endpoints come back', async () => {
    const companyA = await createTenant(stack.orm, ['admin']);
    const companyB = await createTenant(stack.orm, ['admin']);
    const subscriberA = await addApiKey(stack, companyA);
    const subscriberB = await addApiKey(stack, companyB);

    const healthy = await receiver();
    await registerEndpoint(stack, subscriberB.key, { url: healthy.url, event_types: ['employee.created'] });

    // Three endpoints that accept TLS connections and never answer, two whose ports refuse connections.
    const hanging = await Promise.all([0, 1, 2].map(() => receiver()));
    for (const hook of hanging) hook.respondWith(() => ({ status: 200, hang: true }));
    const refusingPorts = [await freePort(), await freePort()];
    const deadUrls = [...hanging.map((h) => h.url), ...refusingPorts.map((port) => `https://localhost:${port}/hook`)];
    const dead: RegisteredEndpoint[] = [];
    for (const url of deadUrls) dead.push(await registerEndpoint(stack, subscriberA.key, { url, event_types: ['employee.created'] }));

    const baseline = median([await deliveryLatency(companyB, healthy), await deliveryLatency(companyB, healthy), await deliveryLatency(companyB, healthy)]);

    // The ERP sync: 60 employees into company A, six requests at a time (over keys enough for the per-key rate limit).
    const erp = inboundSender(stack, companyA);
    for (let batch = 0; batch < 10; batch++) {
      const sent = await Promise.all(Array.from({ length: 6 }, () => erp.send('employee.created', employeeData('A'))));
      expect(sent.map((r) => r.status)).toEqual(Array(6).fill(200));
    }
    await waitFor(async () => {
      const [row] = await stack.em().execute<{ count: string }[]>('select count(*) as count from webhook_deliveries where company_id = ?', [companyA.companyId]);
      return Number(row!.count) === 300;
    }, 60_000, "company A's 300 deliveries");

    // Right after the burst, while the hanging attempts hold their sockets: B's deliveries are as quick as before.
    const bound = Math.max(5_000, 5 * baseline);
    for (let i = 0; i < 3; i++) expect(await deliveryLatency(companyB, healthy)).toBeLessThanOrEqual(bound);

    // Multi-step operations of both companies finish within the inbound wait: 200, not 202.
    for (const tenant of [companyA, companyB]) {
      const created = await sendInbound(stack.baseUrl, tenant, envelope('project.created', projectData(`ISO-${tenant.companyId.slice(0, 8)}`)));
      expect(created.status).toBe(200);
    }
    // A purchase-order decision: the approval workflow answers at once.
    const api = restClient(stack, companyB);
    await api.create('approval-thresholds', { role_name: 'Project Manager', max_amount: null });
    const approver = (await api.create('employees', { emp_number: 'ISO-PM', name: 'Sam Chen', email: 'pm@example.com', employee_type: 'office', role_name: 'Project Manager' })).id;
    const vendorId = (await api.create('vendors', { vendor_name: 'Apex Electrical Ltd.' })).id;
    const projectId = await seedProject(stack, companyB, 'ISO-PO');
    const po = await api.create('purchase-orders', { vendor_id: vendorId, project_id: projectId, currency: 'CAD', line_items: [{ description: 'Cable', quantity: 10, unit_price: 15 }] });
    expect((await api.post(`/purchase-orders/${po.id}/submit`, {})).status).toBe(200);
    const decision = await api.post(`/purchase-orders/${po.id}/approve`, { approver_id: approver, notes: 'ok' });
    expect(decision.status).toBe(200);
    expect(decision.body.status).toBe('approved');

    // The breakers of the refusing endpoints open, and their deliveries wait without using up attempts.
    await waitFor(
      async () => {
        const circuits = await stack.em().execute<{ circuit_state: string }[]>('select circuit_state from webhook_endpoints where id in (?, ?)', [dead[3]!.id, dead[4]!.id]);
        return circuits.every((c) => c.circuit_state === 'open');
      },
      60_000,
      "the refusing endpoints' breakers to open (once retries failed too)",
    );

    // The endpoints come back: the hanging ones answer new requests, the refusing ports listen.
    for (const hook of hanging) hook.respondWith((request) => {
      (hook as TestReceiver & { answered: string[] }).answered.push(String(request.headers['x-webhook-id']));
      return { status: 200 };
    });
    const revived = [...hanging, ...(await Promise.all(refusingPorts.map((port) => receiver(port))))];

    await waitFor(
      async () => {
        const [row] = await stack.em().execute<{ count: string }[]>(`select count(*) as count from webhook_deliveries where company_id = ? and status = 'delivered'`, [companyA.companyId]);
        return Number(row!.count) === 300;
      },
      240_000,
      "every one of company A's 300 deliveries to be delivered",
    );
    for (const [i, endpoint] of dead.entries()) {
      const ids = (await stack.em().execute<{ id: string }[]>('select id from webhook_deliveries where endpoint_id = ?', [endpoint.id])).map((r) => r.id);
      const answered = revived[i]!.answered;
      // Each delivery answered exactly once at its endpoint, under its own X-Webhook-ID.
      expect(answeredOnce(answered)).toBe(true);
      expect([...answered].sort()).toEqual([...ids].sort());
    }
    const [failed] = await stack.em().execute<{ count: string }[]>(`select count(*) as count from webhook_alerts where company_id = ?`, [companyA.companyId]);
    expect(Number(failed!.count)).toBe(0);
  }, 420_000);
});

/**
 * Held deliveries, and deferred ones after them, are let through oldest first. With one attempt in flight per endpoint
 * the order they arrive in is the order they were let through, so it shows exactly.
 */
describe('isolation: held deliveries are released in creation order', () => {
  let stack: TestStack;
  let revived: TestReceiver | null = null;

  beforeAll(async () => {
    stack = await startStack({
      config: await testConfig({ WEBHOOK_ENDPOINT_MAX_IN_FLIGHT: '1', WEBHOOK_RETRY_SCHEDULE: '1,60,60,60,60', WEBHOOK_CIRCUIT_COOLDOWN: '1', WEBHOOK_CIRCUIT_MAX_COOLDOWN: '2' }),
    });
  });
  afterAll(async () => {
    await revived?.close();
    await stack.close();
  });

  it('lets the deliveries waiting behind an open breaker through in the order they were made, each once', async () => {
    const { port, endpoint } = await refusingEndpointWithEvents(stack, 15, 'ORDER');

    // Nothing listens: the first attempts fail, then the retries a second later, which open the breaker; the
    // deliveries that come back after that are held behind it, and those beyond the endpoint's runs wait deferred,
    // without a run.
    const held = await waitFor(
      async () => {
        const rows = await stack.em().execute<{ id: string }[]>(
          `select d.id from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
            where d.endpoint_id = ? and (d.held_until is not null or d.deferred_since is not null) and e.circuit_state = 'open' order by d.created_at, d.id`,
          [endpoint.id],
        );
        return rows.length >= 8 ? rows.map((r) => r.id) : null;
      },
      60_000,
      'deliveries waiting behind the open breaker',
    );
    revived = await startReceiver({ port });
    // The endpoint's return is noticed at its runs' next retry, a minute after their last failure (the deferred
    // deliveries have no run to probe with), then the 15 go out one at a time.
    await waitFor(
      async () => {
        const [row] = await stack.em().execute<{ count: string }[]>(`select count(*) as count from webhook_deliveries where endpoint_id = ? and status = 'delivered'`, [endpoint.id]);
        return Number(row!.count) === 15;
      },
      180_000,
      'all 15 deliveries to be delivered',
    );
    const arrived = revived.requests.map((r) => String(r.headers['x-webhook-id']));
    expect(new Set(arrived).size).toBe(arrived.length);
    expect(arrived.filter((id) => held.includes(id))).toEqual(held);
  }, 300_000);
});

/** The breaker as operators see and handle it: REST, /metrics, the Temporal UI, and closing it by hand. */
describe('isolation: an open breaker, seen and closed by hand', () => {
  let stack: TestStack;
  let revived: TestReceiver | null = null;

  beforeAll(async () => {
    // A cool-down far longer than the test: only closing it by hand lets the held deliveries through.
    stack = await startStack({ config: await testConfig({ WEBHOOK_RETRY_SCHEDULE: '1,120,120,120,120', WEBHOOK_CIRCUIT_COOLDOWN: '600' }) });
  });
  afterAll(async () => {
    await revived?.close();
    await stack.close();
  });

  it('shows the open breaker and its held deliveries, and POST close-circuit lets them through at once', async () => {
    const { company, subscriber, port, endpoint } = await refusingEndpointWithEvents(stack, 12, 'CLOSE');

    const shown = await waitFor(
      async () => {
        const body = (await request(stack.baseUrl, 'GET', `/api/v1/webhook-endpoints/${endpoint.id}`, { key: subscriber.key })).body;
        return body.circuit_breaker.state === 'open' ? body : null;
      },
      60_000,
      'the breaker to open',
    );
    expect(shown.circuit_breaker).toEqual({ state: 'open', failing_deliveries: 5, opened_at: expect.any(String), next_probe_at: expect.any(String) });
    expect(Date.parse(shown.circuit_breaker.next_probe_at) - Date.now()).toBeGreaterThan(500_000);

    // The endpoint never answered, so it had the runs its breaker needs, five, each of which failed its retry; then
    // one run more, held by the breaker to make its probe. The other six wait deferred, without a run.
    const waiting = async () =>
      stack.em().execute<{ id: string; retried: boolean; held: boolean; deferred: boolean }[]>(
        `select id, attempt_count > 1 as retried, held_reason = 'circuit_open' as held, deferred_since is not null as deferred
           from webhook_deliveries where endpoint_id = ? order by created_at, id`,
        [endpoint.id],
      );
    const rows = await waitFor(
      async () => {
        const now = await waiting();
        // The dispatcher marks a run started (deferred no more) just after starting it, and the run may ask its
        // endpoint, and be held, before that: the state settles once no held delivery is still marked deferred.
        return now.some((r) => r.held) && !now.some((r) => r.held && r.deferred) ? now : null;
      },
      30_000,
      'a run held to probe with',
    );
    expect(rows.map((r) => (r.retried ? 'retried' : r.held ? 'held' : r.deferred ? 'deferred' : 'other'))).toEqual([
      ...Array(5).fill('retried'),
      'held',
      ...Array(6).fill('deferred'),
    ]);
    const held = rows.filter((r) => r.held).map((r) => r.id);
    // The waiting ones are counted in /metrics, and marked in the Temporal UI.
    const metrics = await (await fetch(`${stack.baseUrl}/metrics`)).text();
    expect(metrics).toContain('webhook_endpoint_circuits{state="open"} 1');
    expect(metrics).toContain(`webhook_deliveries_held{reason="circuit_open"} ${held.length}`);
    for (const id of held) {
      await waitFor(async () => {
        const { typedSearchAttributes } = await stack.temporal.workflow.getHandle(`webhook-delivery/${id}`).describe();
        // Why it waited when it last asked: those held for a slot before the breaker opened still say so.
        return ['circuit_open', 'endpoint_busy'].includes(String(typedSearchAttributes.get(DELIVERY_HELD)));
      }, 30_000, `delivery ${id} marked held in the Temporal UI`);
    }

    // The console's endpoint page says so, with the button that closes it.
    const { user, password } = await createUser(stack.em(), { companyId: company.companyId, email: `admin@${company.companyId}.example`, name: 'Admin', role: 'admin' });
    const operator = new ConsoleClient(stack.baseUrl);
    expect((await operator.signIn(user.email, password)).status).toBe(303);
    const page = (await operator.get(`/console/endpoints/${endpoint.id}`)).text;
    expect(page).toContain('<span class="badge badge-open">open</span>');
    expect(page).toContain('7 deliveries wait for the endpoint');
    expect(page).toContain(`action="/console/endpoints/${endpoint.id}/close-circuit"`);

    revived = await startReceiver({ port });
    const closed = await request(stack.baseUrl, 'POST', `/api/v1/webhook-endpoints/${endpoint.id}/close-circuit`, { key: subscriber.key });
    expect(closed.status).toBe(200);
    expect(closed.body.circuit_breaker).toEqual({ state: 'closed', failing_deliveries: 0, opened_at: null, next_probe_at: null });
    // Well before the cool-down, and before the other deliveries' next retries (2 min): the held ones go out now.
    const arrived = await revived.waitForRequests(held.length, 15_000);
    expect(arrived.map((r) => String(r.headers['x-webhook-id'])).sort()).toEqual([...held].sort());
    for (const id of held) {
      const { attempts } = await waitForDeliveryStatus(stack, subscriber.key, id, ['delivered']);
      expect(attempts.filter((a: { outcome: string }) => a.outcome === 'succeeded')).toEqual([attempts.at(-1)]);
    }
    // Its first delivery gives the endpoint its whole budget: the deferred six start at once, not at the retries (2 min).
    const deferred = rows.filter((r) => r.deferred).map((r) => r.id);
    const next = await revived.waitForRequests(1 + deferred.length, 15_000);
    expect(next.slice(1).map((r) => String(r.headers['x-webhook-id'])).sort()).toEqual([...deferred].sort());
  }, 180_000);
});
