import type { EntityManager } from '@mikro-orm/postgresql';
import { createCompany } from '../../src/domain/accounts/api-keys-service';
import { connectOrm } from '../../src/database';
import type { Orm } from '../../src/db/orm';
import { admitAttempt, type AdmissionSettings, closeCircuit, settleAttempt } from '../../src/delivery/endpoints/endpoint-admission';
import { verdictOf } from '../../src/delivery/attempts/attempt-result';
import { WebhookDelivery } from '../../src/delivery/webhook-delivery.entity';
import { WebhookEndpoint } from '../../src/delivery/endpoints/webhook-endpoint.entity';
import type { AttemptResult as WebhookResult } from '../../src/delivery/attempts/attempt-result';
import { createTestDatabase } from '../helpers/stack';

const SETTINGS: AdmissionSettings = { maxInFlight: 2, failureThreshold: 3, cooldownMs: 60_000, maxCooldownMs: 600_000, slotLeaseMs: 90_000 };

const result = (over: Partial<WebhookResult>): WebhookResult => ({
  statusCode: null,
  durationMs: 5,
  error: null,
  failureKind: null,
  responseExcerpt: null,
  retryAfterMs: null,
  ...over,
});

/** Admission and the breaker on real PostgreSQL: what every worker replica shares. */
describe('endpoint admission', () => {
  let orm: Orm;
  let companyId: string;

  beforeAll(async () => {
    orm = await connectOrm(await createTestDatabase(), 4);
    companyId = (await createCompany(orm.em.fork() as EntityManager, 'Admission Co')).id;
  });
  afterAll(() => orm.close());

  const em = () => orm.em.fork() as EntityManager;

  async function endpointWith(count: number): Promise<{ endpointId: string; deliveries: string[] }> {
    const fork = em();
    const endpoint = fork.create(WebhookEndpoint, { company: companyId, url: 'https://hooks.example.com/x', eventTypes: ['*'], secretSealed: 'sealed' });
    await fork.flush();
    const deliveries: string[] = [];
    // One at a time, so creation order is the order of the list.
    for (let i = 0; i < count; i++) {
      const delivery = fork.create(WebhookDelivery, { company: companyId, endpoint, eventType: 'employee.created', payload: '{}' });
      await fork.flush();
      deliveries.push(delivery.id);
    }
    return { endpointId: endpoint.id, deliveries };
  }

  const admit = (endpointId: string, deliveryId: string) => admitAttempt(em(), SETTINGS, endpointId, deliveryId);
  /** Settles attempt `attemptNumber` (a retry unless told). */
  const settle = (endpointId: string, deliveryId: string, outcome: WebhookResult, attemptNumber = 1) =>
    em().transactional((tx) => settleAttempt(tx as EntityManager, SETTINGS, endpointId, { deliveryId, attemptNumber }, verdictOf(outcome)));
  const endpointRow = async (endpointId: string) =>
    (await em().execute(`select circuit_state, cardinality(circuit_failing_deliveries)::int as failing, circuit_probe_at from webhook_endpoints where id = ?`, [endpointId]))[0];
  const refused = result({ error: 'connect ECONNREFUSED', failureKind: 'connection' });
  const ok = result({ statusCode: 200 });

  it('lets maxInFlight attempts through at once, holds the rest, and wakes them oldest first as slots free', async () => {
    const { endpointId, deliveries: [a, b, c, d] } = await endpointWith(4);
    expect(await admit(endpointId, a!)).toEqual({ admitted: true });
    expect(await admit(endpointId, b!)).toEqual({ admitted: true });
    // The youngest asks first: it is held, and so is the older one after it, behind no one but the cap.
    expect(await admit(endpointId, d!)).toMatchObject({ admitted: false, reason: 'endpoint_busy' });
    expect(await admit(endpointId, c!)).toMatchObject({ admitted: false, reason: 'endpoint_busy' });

    // A retried activity of an admitted attempt (its worker died) is admitted again, on the slot it holds.
    expect(await admit(endpointId, a!)).toEqual({ admitted: true });

    const freed = await settle(endpointId, a!, ok);
    expect(freed).toEqual({ transition: null, wake: [c] });
    // The younger held one may not pass the older one that was woken.
    expect(await admit(endpointId, d!)).toMatchObject({ admitted: false, reason: 'endpoint_busy' });
    expect(await admit(endpointId, c!)).toEqual({ admitted: true });
    expect((await settle(endpointId, b!, ok)).wake).toEqual([d]);
    expect(await admit(endpointId, d!)).toEqual({ admitted: true });
  });

  it('opens after failed retries of threshold different deliveries (a first attempt alone does not count, one delivery retrying counts once), probes once after the cool-down, and closes on its success', async () => {
    const { endpointId, deliveries: [a, b, c, d] } = await endpointWith(4);
    for (let i = 0; i < 4; i++) {
      expect(await admit(endpointId, a!)).toEqual({ admitted: true });
      expect((await settle(endpointId, a!, refused, i)).transition).toBeNull();
    }
    expect(await endpointRow(endpointId)).toMatchObject({ circuit_state: 'closed', failing: 1 });

    // A failed first attempt alone does not count: the receiver may take the retry.
    await admit(endpointId, b!);
    await settle(endpointId, b!, result({ statusCode: 503, error: 'HTTP 503', failureKind: 'http' }), 0);
    expect(await endpointRow(endpointId)).toMatchObject({ circuit_state: 'closed', failing: 1 });
    await admit(endpointId, b!);
    await settle(endpointId, b!, result({ statusCode: 503, error: 'HTTP 503', failureKind: 'http' }));
    await admit(endpointId, c!);
    const opened = await settle(endpointId, c!, result({ error: 'timed out after 30000 ms', failureKind: 'timeout' }));
    expect(opened.transition).toBe('opened');
    expect(await endpointRow(endpointId)).toMatchObject({ circuit_state: 'open', failing: 3 });

    // Open: the oldest waiting delivery waits until the probe time, the younger ones longer (they are woken).
    const head = await admit(endpointId, a!);
    expect(head).toMatchObject({ admitted: false, reason: 'circuit_open' });
    expect((head as { retryInMs: number }).retryInMs).toBeGreaterThan(55_000);
    expect((head as { retryInMs: number }).retryInMs).toBeLessThanOrEqual(60_000);
    const younger = await admit(endpointId, d!);
    expect((younger as { retryInMs: number }).retryInMs).toBeGreaterThan(60_000);

    // The cool-down is over: the oldest makes the probe; nobody else passes while it is under way.
    await em().execute(`update webhook_endpoints set circuit_probe_at = clock_timestamp() - interval '1 second' where id = ?`, [endpointId]);
    expect(await admit(endpointId, d!)).toMatchObject({ admitted: false, reason: 'circuit_open' });
    expect(await admit(endpointId, a!)).toEqual({ admitted: true });
    expect(await endpointRow(endpointId)).toMatchObject({ circuit_state: 'half_open' });
    expect(await admit(endpointId, d!)).toMatchObject({ admitted: false, reason: 'circuit_open' });

    // The probe fails: open again for twice the cool-down, and the oldest waiting delivery is woken to wait for it.
    const reopened = await settle(endpointId, a!, refused);
    expect(reopened).toEqual({ transition: 'reopened', wake: [d] });
    const row = await endpointRow(endpointId);
    expect(row.circuit_state).toBe('open');
    expect(new Date(row.circuit_probe_at).getTime() - Date.now()).toBeGreaterThan(110_000);

    // The next probe succeeds: closed, and the waiting deliveries are woken, as many as may be in flight.
    await em().execute(`update webhook_endpoints set circuit_probe_at = clock_timestamp() - interval '1 second' where id = ?`, [endpointId]);
    expect(await admit(endpointId, d!)).toEqual({ admitted: true });
    expect(await settle(endpointId, d!, ok)).toEqual({ transition: 'closed', wake: [] });
    expect(await endpointRow(endpointId)).toMatchObject({ circuit_state: 'closed', failing: 0 });
  });

  it('counts a 4xx as the endpoint being up, and a 429 as neither', () => {
    expect(verdictOf(result({ statusCode: 404, error: 'HTTP 404', failureKind: 'http' }))).toBe('healthy');
    expect(verdictOf(result({ statusCode: 429, error: 'HTTP 429', failureKind: 'http' }))).toBe('neutral');
    expect(verdictOf(result({ statusCode: 502, error: 'HTTP 502', failureKind: 'http' }))).toBe('failing');
    expect(verdictOf(result({ error: 'redirect not followed', failureKind: 'redirect', statusCode: 302 }))).toBe('neutral');
  });

  it('is closed by hand, waking the oldest waiting deliveries', async () => {
    const { endpointId, deliveries } = await endpointWith(6);
    for (const id of deliveries.slice(0, 3)) {
      await admit(endpointId, id);
      await settle(endpointId, id, refused);
    }
    expect(await endpointRow(endpointId)).toMatchObject({ circuit_state: 'open' });
    for (const id of deliveries.slice(3)) expect(await admit(endpointId, id)).toMatchObject({ admitted: false, reason: 'circuit_open' });
    expect(await closeCircuit(em(), SETTINGS, endpointId)).toEqual(deliveries.slice(3, 5));
    expect(await endpointRow(endpointId)).toMatchObject({ circuit_state: 'closed', failing: 0 });
  });

  it('keeps the cap across concurrent admissions (as from several workers)', async () => {
    const { endpointId, deliveries } = await endpointWith(12);
    const outcomes = await Promise.all(deliveries.map((id) => admit(endpointId, id)));
    expect(outcomes.filter((o) => o.admitted)).toHaveLength(SETTINGS.maxInFlight);
  });
});
