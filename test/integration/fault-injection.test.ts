import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type EmbeddedDatabase, startEmbeddedPostgres } from '../../src/db/embedded-postgres';
import { connectOrm, migrate } from '../../src/database';
import { type DevServer, startTemporalDevServer } from '../../src/temporal/dev-server';
import { installTemporalRuntime } from '../../src/temporal/runtime';
import { startReceiver, type TestReceiver } from '../helpers/https-receiver';
import { freePort } from '../helpers/ports';
import { waitFor } from '../helpers/processes';
import { createTenant, envelope, issueTestKey, request, sendInbound, startStack, type Tenant, testConfig, type TestStack } from '../helpers/stack';
import { registerEndpoint } from '../helpers/webhooks';

/**
 * Outages while work is in flight, on a PostgreSQL and a Temporal server of this file's own (the shared
 * ones keep serving the other test files): nothing accepted is lost or doubled, every delivery arrives, and
 * what is refused during an outage is a 503 with Retry-After.
 */
describe('fault injection', () => {
  let dir: string;
  let db: EmbeddedDatabase;
  let pgPort: number;
  let temporal: DevServer;
  let temporalPort: number;
  let stack: TestStack;
  let receiver: TestReceiver;
  let senders: Tenant[];

  const startDatabase = () => startEmbeddedPostgres({ dataDir: path.join(dir, 'postgres-data'), port: pgPort, database: 'faults' });
  const startTemporal = () => startTemporalDevServer({ dbFilename: path.join(dir, 'temporal.db'), port: temporalPort, namespace: 'default' });

  beforeAll(async () => {
    // Before the dev server: starting it would create the SDK runtime with its defaults.
    installTemporalRuntime(process.env.LOG_LEVEL ?? 'silent');
    dir = mkdtempSync(path.join(os.tmpdir(), 'faults-'));
    pgPort = await freePort();
    temporalPort = await freePort();
    db = await startDatabase();
    const orm = await connectOrm(db.url, 1);
    await migrate(orm);
    await orm.close();
    temporal = await startTemporal();
    stack = await startStack({
      config: await testConfig({ DATABASE_URL: db.url, TEMPORAL_ADDRESS: temporal.address, WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1' }),
    });
    receiver = await startReceiver();
    const admin = await createTenant(stack.orm, ['admin']);
    // The endpoint belongs to no key: every change is sent to it, whichever key made it.
    await registerEndpoint(stack, admin.key, { url: receiver.url, event_types: ['customer.created'], api_key_id: null });
    // Inbound allows 50 requests a minute per key; the senders share the load.
    senders = await Promise.all([0, 1, 2].map(() => issueTestKey(stack.orm, admin.companyId, ['admin'])));
  }, 120_000);

  afterAll(async () => {
    await receiver?.close();
    await stack?.close();
    await temporal?.stop();
    await db?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Customers named `name`, through the REST log of whoever sends it: how many exist. */
  async function customersNamed(prefix: string): Promise<Map<string, number>> {
    const rows = await stack.em().execute<{ name: string; n: number }[]>('select name, count(*)::int as n from customers where name like ? group by name', [`${prefix}%`]);
    return new Map(rows.map((r) => [r.name, r.n]));
  }

  async function eventsNamed(prefix: string): Promise<Map<string, number>> {
    const rows = await stack.em().execute<{ name: string; n: number }[]>(
      "select data->>'name' as name, count(*)::int as n from outbox_events where event_type = 'customer.created' and data->>'name' like ? group by 1",
      [`${prefix}%`],
    );
    return new Map(rows.map((r) => [r.name, r.n]));
  }

  /** Deliveries the receiver got for customers named `prefix…`: distinct X-Webhook-IDs per name, and raw copies. */
  function deliveriesNamed(prefix: string) {
    const ids = new Map<string, Set<string>>();
    let copies = 0;
    for (const received of receiver.requests) {
      const name = (JSON.parse(received.body) as { data: { name: string } }).data.name;
      if (!name.startsWith(prefix) || received.headers['x-webhook-retry'] === undefined) continue;
      const answered = received;
      copies += 1;
      if (!ids.has(name)) ids.set(name, new Set());
      ids.get(name)!.add(String(answered.headers['x-webhook-id']));
    }
    return { ids, copies };
  }

  it('restarting PostgreSQL during inbound writes and deliveries loses and doubles nothing', async () => {
    const names = Array.from({ length: 45 }, (_, i) => `DB Outage ${String(i).padStart(2, '0')}`);
    const statuses = new Map<string, { status: number; retryAfter: string | null; error?: unknown }>();
    let next = 0;
    const lane = async (sender: Tenant) => {
      while (next < names.length) {
        const name = names[next++]!;
        const response = await sendInbound(stack.baseUrl, sender, envelope('customer.created', { name })).catch(() => ({ status: 0, headers: new Headers(), body: undefined }));
        const error = response.status === 200 ? undefined : (response.body as { error?: unknown } | undefined)?.error;
        statuses.set(name, { status: response.status, retryAfter: response.headers.get('retry-after'), ...(error ? { error } : {}) });
        await sleep(40);
      }
    };
    const sending = Promise.all(senders.map(lane));
    await waitFor(async () => statuses.size >= 12, 30_000, 'a dozen requests to be answered');
    await db.stop();
    await sleep(1500);
    db = await startDatabase();
    await sending;

    const answered = [...statuses.values()];
    expect(answered.filter((a) => a.status !== 200 && a.status !== 503)).toEqual([]);
    expect(answered.filter((a) => a.status === 503 && !a.retryAfter)).toEqual([]);
    const accepted = names.filter((n) => statuses.get(n)!.status === 200);
    const refused = names.filter((n) => statuses.get(n)!.status === 503);

    // A client resends what was refused, after Retry-After; 409 means the first try had committed after all.
    for (const name of refused) {
      await waitFor(
        async () => {
          const response = await sendInbound(stack.baseUrl, senders[0]!, envelope('customer.created', { name }));
          return response.status === 200 || response.status === 409;
        },
        60_000,
        `${name} to be accepted on a resend`,
      );
    }

    const records = await customersNamed('DB Outage');
    const events = await eventsNamed('DB Outage');
    expect(names.filter((n) => records.get(n) !== 1)).toEqual([]);
    expect(names.filter((n) => events.get(n) !== 1)).toEqual([]);
    await waitFor(async () => deliveriesNamed('DB Outage').ids.size === names.length, 120_000, 'every customer.created to be delivered');
    const { ids, copies } = deliveriesNamed('DB Outage');
    expect([...ids.values()].filter((set) => set.size !== 1)).toEqual([]);
    console.log(
      `PostgreSQL restart: ${names.length} requests, ${accepted.length} accepted, ${refused.length} refused with 503 + Retry-After and resent; ` +
        `${records.size} customers and ${[...events.values()].reduce((a, b) => a + b, 0)} events found, each once; ` +
        `${ids.size} deliveries received (${copies} attempts arrived, deduplicated by X-Webhook-ID)`,
    );
  }, 240_000);

  it('restarting the Temporal server during deliveries loses none of them', async () => {
    // The first attempt of each delivery fails, so the deliveries are waiting on durable timers when Temporal stops.
    const attemptsSeen = new Set<string>();
    receiver.respondWith((received) => {
      const id = String(received.headers['x-webhook-id']);
      if (attemptsSeen.has(id)) return { status: 200, body: '{"received":true}' };
      attemptsSeen.add(id);
      return { status: 503, body: 'warming up' };
    });
    const before = Array.from({ length: 15 }, (_, i) => `Temporal Outage ${String(i).padStart(2, '0')}`);
    for (const name of before) {
      const created = await request(stack.baseUrl, 'POST', '/api/v1/customers', { key: senders[1]!.key, body: { name } });
      expect(created.status).toBe(201);
    }
    await waitFor(async () => [...attemptsSeen].length >= before.length, 60_000, 'every delivery to have made its first attempt');

    await temporal.stop();
    // Changes keep being accepted while Temporal is down: they wait in the outbox.
    const during = Array.from({ length: 5 }, (_, i) => `Temporal Outage during ${i}`);
    for (const name of during) {
      const created = await request(stack.baseUrl, 'POST', '/api/v1/customers', { key: senders[1]!.key, body: { name } });
      expect(created.status).toBe(201);
    }
    // A multi-step operation needs Temporal: refused with 503 and Retry-After, not a 500.
    const project = await sendInbound(stack.baseUrl, senders[2]!, envelope('project.created', { project_code: 'T-OUT', project_name: 'Outage', customer_name: 'X', location_name: 'Y' }));
    expect(project.status).toBe(503);
    expect(project.headers.get('retry-after')).toBeTruthy();
    await sleep(1500);
    temporal = await startTemporal();

    const names = [...before, ...during];
    await waitFor(async () => names.every((n) => (deliveriesNamed('Temporal Outage').ids.get(n)?.size ?? 0) === 1), 120_000, 'every customer.created to be delivered');
    const delivered = await stack.em().execute<{ n: number }[]>(
      "select count(*)::int as n from webhook_deliveries d join outbox_events e on e.id = d.event_id where e.data->>'name' like 'Temporal Outage%' and d.status = 'delivered'",
    );
    await waitFor(
      async () =>
        (
          await stack.em().execute<{ n: number }[]>(
            "select count(*)::int as n from webhook_deliveries d join outbox_events e on e.id = d.event_id where e.data->>'name' like 'Temporal Outage%' and d.status = 'delivered'",
          )
        )[0]!.n === names.length,
      60_000,
      'every delivery to be recorded as delivered',
    );
    const { ids, copies } = deliveriesNamed('Temporal Outage');
    expect([...ids.values()].filter((set) => set.size !== 1)).toEqual([]);
    console.log(
      `Temporal restart: ${names.length} changes accepted (${during.length} while it was down), ${ids.size} deliveries received ` +
        `(${copies} attempts arrived, the first of each refused on purpose), ${delivered[0]!.n}+ recorded delivered; project.created refused with 503 + Retry-After`,
    );
  }, 240_000);
});
