import { verifyWebhookSignature } from '../../src/crypto/webhook-signature';
import { startReceiver, type TestReceiver } from '../helpers/https-receiver';
import { freePort } from '../helpers/ports';
import { waitFor } from '../helpers/processes';
import { createTenant, envelope, request, sendInbound, startStack, testConfig, type Tenant, type TestStack } from '../helpers/stack';
import { addApiKey, deliveryIdsOf, registerEndpoint, type RegisteredEndpoint, verifiedAsReceiver, waitForDeliveryStatus } from '../helpers/webhooks';

let employeeSeq = 0;
const employee = () => envelope('employee.created', { emp_number: `SUB-${++employeeSeq}`, name: 'Dana Builder', email: 'dana@example.com', employee_type: 'site_worker' });

/** What Svix and Standard Webhooks subscribers expect beyond the spec: endpoints disabled, Retry-After, rotation, rate limits, the attempt log. */
describe('subscriber features', () => {
  let stack: TestStack;
  const receivers: TestReceiver[] = [];

  beforeAll(async () => {
    // The schedule's longest wait is 1.5 s: a receiver's Retry-After is honoured up to that.
    stack = await startStack({ config: await testConfig({ WEBHOOK_TIMEOUT_MS: '1500', WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2,0.2,1.5' }) });
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await stack.close();
  });

  /** A company of its own (so its endpoint gets only its events), a subscriber key, and a receiver. */
  async function subscriberWith(reply?: Parameters<TestReceiver['respondWith']>[0], body: Record<string, unknown> = {}) {
    const sender = await createTenant(stack.orm, ['admin']);
    const subscriber = await addApiKey(stack, sender);
    const hook = await startReceiver();
    receivers.push(hook);
    if (reply) hook.respondWith(reply);
    const endpoint = await registerEndpoint(stack, subscriber.key, { url: hook.url, event_types: ['employee.created'], ...body });
    return { sender, subscriber, hook, endpoint };
  }

  async function deliveryOf(sender: Tenant, endpoint: RegisteredEndpoint, known: string[] = []): Promise<string> {
    await sendInbound(stack.baseUrl, sender, employee());
    const [id] = await waitFor(async () => {
      const ids = (await deliveryIdsOf(stack, endpoint.id)).filter((i) => !known.includes(i));
      return ids.length ? ids : null;
    });
    return id!;
  }

  const get = (key: string, path: string) => request(stack.baseUrl, 'GET', `/api/v1${path}`, { key });

  it('disables an endpoint that answers 410 Gone, says why, raises an alert, and takes it back through REST', async () => {
    const { sender, subscriber, hook, endpoint } = await subscriberWith(() => ({ status: 410, body: 'no such hook' }));
    const deliveryId = await deliveryOf(sender, endpoint);
    const failed = await waitForDeliveryStatus(stack, subscriber.key, deliveryId, ['failed']);
    expect(failed.attempts).toEqual([expect.objectContaining({ status_code: 410, outcome: 'permanent_failure', response_excerpt: 'no such hook' })]);

    const disabled = (await get(subscriber.key, `/webhook-endpoints/${endpoint.id}`)).body;
    expect(disabled).toMatchObject({ status: 'disabled', disabled_reason: expect.stringMatching(/^The endpoint answered 410 Gone at /), disabled_at: expect.any(String) });
    const alerts = (await get(subscriber.key, '/webhook-alerts?status=open')).body.data;
    expect(alerts).toContainEqual(
      expect.objectContaining({ kind: 'endpoint_disabled', endpoint_id: endpoint.id, delivery_id: null, message: expect.stringContaining('410 Gone'), resolved_at: null }),
    );

    // Disabled: no deliveries are made for it.
    await sendInbound(stack.baseUrl, sender, employee());
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await deliveryIdsOf(stack, endpoint.id)).toEqual([deliveryId]);

    hook.respondWith(() => ({ status: 200 }));
    const enabled = await request(stack.baseUrl, 'PUT', `/api/v1/webhook-endpoints/${endpoint.id}`, { key: subscriber.key, body: { status: 'active' } });
    expect(enabled.body).toMatchObject({ status: 'active', disabled_reason: null, disabled_at: null });
    expect((await get(subscriber.key, '/webhook-alerts?status=resolved')).body.data).toContainEqual(
      expect.objectContaining({ kind: 'endpoint_disabled', endpoint_id: endpoint.id, resolved_at: expect.any(String) }),
    );
    const next = await deliveryOf(sender, endpoint, [deliveryId]);
    await waitForDeliveryStatus(stack, subscriber.key, next, ['delivered']);
    expect(hook.requests.at(-1)!.headers['x-webhook-id']).toBe(next);
  });

  it('disables an endpoint that has failed every attempt for WEBHOOK_DISABLE_AFTER (5 days by default), with an alert', async () => {
    const sender = await createTenant(stack.orm, ['admin']);
    const subscriber = await addApiKey(stack, sender);
    // Nothing listens there: every attempt is a connection error.
    const endpoint = await registerEndpoint(stack, subscriber.key, { url: `https://localhost:${await freePort()}/hook`, event_types: ['employee.created'] });
    // As if its first failure of the streak was 5 days and a minute ago.
    await stack.em().execute(`update webhook_endpoints set failing_since = now() - interval '5 days 1 minute' where id = ?`, [endpoint.id]);

    const deliveryId = await deliveryOf(sender, endpoint);
    const failed = await waitForDeliveryStatus(stack, subscriber.key, deliveryId, ['failed']);
    // The attempt that crossed the limit, then one refused at once: the endpoint is disabled.
    expect(failed.attempts.map((a: any) => [a.outcome, a.status_code])).toEqual([
      ['retryable_failure', null],
      ['permanent_failure', null],
    ]);
    expect(failed.attempts[1].error).toMatch(/^endpoint is disabled: Every attempt failed for 120 h, the WEBHOOK_DISABLE_AFTER limit; the last: connect ECONNREFUSED/);
    expect((await get(subscriber.key, `/webhook-endpoints/${endpoint.id}`)).body).toMatchObject({ status: 'disabled', disabled_reason: expect.stringContaining('WEBHOOK_DISABLE_AFTER') });
    expect((await get(subscriber.key, '/webhook-alerts?status=open')).body.data.map((a: any) => a.kind).sort()).toEqual(['delivery_failed', 'endpoint_disabled']);

    // The attempt log by status code class: `none` is no response at all.
    const none = (await get(subscriber.key, `/webhook-endpoints/${endpoint.id}/attempts?status_code_class=none`)).body;
    expect(none.data).toHaveLength(2);
    expect(none.data[1]).toMatchObject({ delivery_id: deliveryId, attempt_number: 0, status_code: null, error: expect.stringContaining('ECONNREFUSED') });
  });

  it("honours a 429's and a 503's Retry-After, up to the schedule's longest wait", async () => {
    const replies = [
      { status: 429, body: 'slow down', headers: { 'Retry-After': '1' } },
      { status: 503, body: 'maintenance', headers: { 'Retry-After': '3600' } },
      { status: 200, body: '{"received":true}' },
    ];
    const { sender, subscriber, hook, endpoint } = await subscriberWith((_, i) => replies[i] ?? { status: 200 });
    const deliveryId = await deliveryOf(sender, endpoint);
    const requests = await hook.waitForRequests(3);
    const delivery = await waitForDeliveryStatus(stack, subscriber.key, deliveryId, ['delivered']);
    expect(delivery.attempts.map((a: any) => [a.status_code, a.outcome])).toEqual([
      [429, 'retryable_failure'],
      [503, 'retryable_failure'],
      [200, 'succeeded'],
    ]);

    // Lower bounds are the point; the upper ones only tell "capped" from "an hour" on a busy machine.
    const [first, second, third] = requests.map((r) => r.receivedAt);
    // Scheduled 0.2 s later; the receiver asked for 1 s.
    expect(second! - first!).toBeGreaterThanOrEqual(950);
    // Asked for an hour: capped at the schedule's longest wait, 1.5 s.
    expect(third! - second!).toBeGreaterThanOrEqual(1450);
    expect(third! - second!).toBeLessThan(10_000);
    console.log(`Retry-After: 1 s asked, ${second! - first!} ms waited; 3600 s asked, ${third! - second!} ms waited (longest wait of the schedule: 1500 ms)`);

    // The succeeded attempt ended the endpoint's failing streak.
    const [row] = await stack.em().execute<{ failing_since: Date | null }[]>('select failing_since from webhook_endpoints where id = ?', [endpoint.id]);
    expect(row!.failing_since).toBeNull();

    // The attempt log, filtered by status code class, with the response excerpts.
    const byClass = async (path: string, statusCodeClass: string) => (await get(subscriber.key, `${path}?status_code_class=${statusCodeClass}`)).body.data;
    const endpointLog = `/webhook-endpoints/${endpoint.id}/attempts`;
    expect((await byClass(endpointLog, '4xx')).map((a: any) => [a.status_code, a.response_excerpt])).toEqual([[429, 'slow down']]);
    expect((await byClass(endpointLog, '5xx')).map((a: any) => [a.status_code, a.response_excerpt])).toEqual([[503, 'maintenance']]);
    expect((await byClass(`/webhook-deliveries/${deliveryId}/attempts`, '2xx')).map((a: any) => a.attempt_number)).toEqual([2]);
    expect((await get(subscriber.key, endpointLog)).body).toMatchObject({ pagination: { limit: 50, offset: 0, total: 3 } });
    const bad = await get(subscriber.key, `${endpointLog}?status_code_class=6xx`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'status_code_class' } });
  });

  it('signs with both secrets during a rotation window, and with the new one only after it', async () => {
    const { sender, subscriber, hook, endpoint } = await subscriberWith();
    const oldSecret = endpoint.secret;
    const rotated = await request(stack.baseUrl, 'POST', `/api/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { key: subscriber.key, body: { overlap_seconds: 3 } });
    expect(rotated.status).toBe(200);
    const newSecret = rotated.body.secret as string;
    expect(Date.parse(rotated.body.previous_secret_expires_at) - Date.now()).toBeGreaterThan(1000);

    const during = await deliveryOf(sender, endpoint);
    const [inWindow] = await hook.waitForRequests(1);
    expect(inWindow!.headers['x-webhook-id']).toBe(during);
    expect(String(inWindow!.headers['x-webhook-signatures'])).toMatch(/^v1=[0-9a-f]{64} v1=[0-9a-f]{64}$/);
    expect(verifiedAsReceiver(newSecret, inWindow!)).toBe(true);
    expect(verifiedAsReceiver(oldSecret, inWindow!)).toBe(true);
    expect(verifiedAsReceiver('whsec_someone_else', inWindow!)).toBe(false);
    // X-Webhook-Signature, the spec's header, carries the current secret's signature.
    const specCheck = (secret: string) =>
      verifyWebhookSignature({ secret, timestamp: String(inWindow!.headers['x-webhook-timestamp']), signature: String(inWindow!.headers['x-webhook-signature']), rawBody: inWindow!.body }).valid;
    expect(specCheck(newSecret)).toBe(true);
    expect(specCheck(oldSecret)).toBe(false);

    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(rotated.body.previous_secret_expires_at) - Date.now()) + 200));
    const after = await deliveryOf(sender, endpoint, [during]);
    const [pastWindow] = (await hook.waitForRequests(2)).slice(1);
    expect(pastWindow!.headers['x-webhook-id']).toBe(after);
    expect(String(pastWindow!.headers['x-webhook-signatures'])).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(verifiedAsReceiver(newSecret, pastWindow!)).toBe(true);
    expect(verifiedAsReceiver(oldSecret, pastWindow!)).toBe(false);
    expect(verifiedAsReceiver([oldSecret, newSecret], pastWindow!)).toBe(true);

    // By default the window is WEBHOOK_SECRET_OVERLAP (24 h); 0 ends the old secret at once; the bounds are checked.
    const byDefault = await request(stack.baseUrl, 'POST', `/api/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { key: subscriber.key });
    expect(Date.parse(byDefault.body.previous_secret_expires_at) - Date.now()).toBeGreaterThan(24 * 3600 * 1000 - 60_000);
    const atOnce = await request(stack.baseUrl, 'POST', `/api/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { key: subscriber.key, body: { overlap_seconds: 0 } });
    expect(atOnce.body.previous_secret_expires_at).toBeNull();
    const negative = await request(stack.baseUrl, 'POST', `/api/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { key: subscriber.key, body: { overlap_seconds: -1 } });
    expect(negative.status).toBe(400);
    expect(negative.body.error.details.field).toBe('overlap_seconds');
  });

  it('keeps to the rate limit an endpoint asks for, across all workers', async () => {
    const { sender, subscriber, hook, endpoint } = await subscriberWith(undefined, { max_attempts_per_second: 2 });
    for (let i = 0; i < 6; i++) await sendInbound(stack.baseUrl, sender, employee());
    const requests = await hook.waitForRequests(6, 20_000);
    const times = requests.map((r) => r.receivedAt).sort((a, b) => a - b);
    // Six attempts at two a second take three one-second windows.
    expect(times.at(-1)! - times[0]!).toBeGreaterThan(1000);
    const ids = await deliveryIdsOf(stack, endpoint.id);
    for (const id of ids) await waitForDeliveryStatus(stack, subscriber.key, id, ['delivered']);
    console.log(`6 deliveries at max_attempts_per_second 2 spread over ${times.at(-1)! - times[0]!} ms`);

    const bounds = await request(stack.baseUrl, 'PUT', `/api/v1/webhook-endpoints/${endpoint.id}`, { key: subscriber.key, body: { max_attempts_per_second: 0 } });
    expect(bounds.status).toBe(400);
    const lifted = await request(stack.baseUrl, 'PUT', `/api/v1/webhook-endpoints/${endpoint.id}`, { key: subscriber.key, body: { max_attempts_per_second: null } });
    expect(lifted.body.max_attempts_per_second).toBeNull();
  });

  it('pages the delivery log by cursor as well as by offset', async () => {
    const { sender, subscriber, endpoint } = await subscriberWith();
    for (let i = 0; i < 5; i++) await sendInbound(stack.baseUrl, sender, employee());
    await waitFor(async () => (await deliveryIdsOf(stack, endpoint.id)).length === 5);
    // All in one millisecond, microseconds apart: what a fan-out can do, and finer than a JavaScript Date.
    await stack.em().execute(
      `update webhook_deliveries d set created_at = timestamptz '2026-03-01T08:00:00.000100Z' + n.i * interval '1 microsecond'
         from (select id, row_number() over (order by id) as i from webhook_deliveries where endpoint_id = ?) n where d.id = n.id`,
      [endpoint.id],
    );

    const byOffset = (await get(subscriber.key, `/webhook-deliveries?endpoint_id=${endpoint.id}`)).body.data.map((d: any) => d.id);
    const walk = async (next: 'next_cursor' | 'next_after') => {
      const byCursor: string[] = [];
      const pages: (string | null)[] = [];
      let after: string | null = null;
      do {
        const page: any = (await get(subscriber.key, `/webhook-deliveries?endpoint_id=${endpoint.id}&limit=2${after ? `&after=${after}` : ''}`)).body;
        byCursor.push(...page.data.map((d: any) => d.id));
        expect(page.pagination.total).toBe(5);
        after = page.pagination[next];
        pages.push(after);
      } while (after);
      return { byCursor, pages };
    };
    const cursors = await walk('next_cursor');
    expect(cursors.byCursor).toEqual(byOffset);
    expect(cursors.pages).toEqual([expect.any(String), expect.any(String), null]);
    // The form before every list had cursors, deprecated: after = the id of the page's last delivery (next_after).
    const ids = await walk('next_after');
    expect(ids.byCursor).toEqual(byOffset);
    expect(ids.pages).toEqual([byOffset[1], byOffset[3], null]);

    const unknown = await get(subscriber.key, '/webhook-deliveries?after=01a20000-0000-7000-8000-000000000000');
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'after' } });
    expect((await get(subscriber.key, '/webhook-deliveries?after=not-an-id')).status).toBe(400);
  });
});
