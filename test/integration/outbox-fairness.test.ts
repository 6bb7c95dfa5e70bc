import { Client as PgClient } from 'pg';
import type { DeliveryToStart, DeliveryWorkflows } from '../../src/delivery/delivery-workflows';
import { OutboxDispatcher, type OutboxDispatcherOptions } from '../../src/delivery/outbox/dispatcher';
import { HEALTHY_PIPELINE } from '../../src/delivery/outbox/endpoint-room';
import { temporalDeliveryWorkflows } from '../../src/temporal/temporal-delivery-workflows';
import { freePort } from '../helpers/ports';
import { waitFor } from '../helpers/processes';
import { createTenant, envelope, sendInbound, startStack, type Tenant, type TestStack } from '../helpers/stack';
import { addApiKey, dispatcherOptions, registerEndpoint } from '../helpers/webhooks';

/** The outbox dispatcher serves companies in turns: one company's burst does not put another's events at the back. */
describe('outbox dispatcher fairness', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack({ worker: false, dispatcher: false });
  });
  afterAll(() => stack.close());

  /** A dispatcher of the test's own, driven by hand: no poll for a minute, no logs. */
  const quietDispatcher = (options: Partial<Pick<OutboxDispatcherOptions, 'companyStartsPerSecond' | 'companyMaxQueued' | 'maxInFlightPerEndpoint' | 'deliveryWorkflows'>> = {}) =>
    new OutboxDispatcher({ ...dispatcherOptions(stack), pollMs: 60_000, ...options });
  /** A quiet dispatcher whose runs are started through `start`, given the real start to call. */
  const dispatcherStartingThrough = (start: (delivery: DeliveryToStart, started: DeliveryWorkflows['start']) => ReturnType<DeliveryWorkflows['start']>) => {
    const workflows = temporalDeliveryWorkflows(stack.temporal, stack.config.temporal.taskQueues);
    return quietDispatcher({ deliveryWorkflows: { ...workflows, start: (delivery) => start(delivery, workflows.start) } });
  };

  const undispatched = async (tenant: Tenant) =>
    Number((await stack.em().execute<{ n: string }[]>('select count(*) as n from outbox_events where company_id = ? and dispatched_at is null', [tenant.companyId]))[0]!.n);
  const dispatchOrder = async (tenant: Tenant) =>
    (await stack.em().execute<{ emp: string }[]>(`select data->>'emp_number' as emp from outbox_events where company_id = ? order by dispatched_at, created_at`, [tenant.companyId])).map(
      (row) => row.emp,
    );
  /**
   * The endpoint answered a webhook.test (POST /webhook-endpoints/{id}/test): it has delivered, so it has its whole
   * pipeline, not the one run of an endpoint before its first delivery.
   */
  const answeredTestEvent = (tenant: Tenant, endpointId: string) =>
    stack.em().execute(
      `insert into webhook_deliveries (id, company_id, created_at, updated_at, endpoint_id, event_type, payload, is_test, status, attempt_count, delivered_at)
       values (gen_random_uuid(), ?, now(), now(), ?, 'webhook.test', '{}', true, 'delivered', 1, now())`,
      [tenant.companyId, endpointId],
    );
  /** An endpoint of the company's for employee.created, of another key than the changes' (a key's own are not sent back to its endpoints), that has delivered before. */
  async function answeringEndpoint(tenant: Tenant, path: string): Promise<{ id: string }> {
    const endpoint = await subscribedEndpoint(tenant, path);
    await answeredTestEvent(tenant, endpoint.id);
    return endpoint;
  }
  /** An endpoint of the company's for employee.created, of another key than the changes', none of whose deliveries has been delivered. */
  const subscribedEndpoint = async (tenant: Tenant, path: string) =>
    registerEndpoint(stack, (await addApiKey(stack, tenant)).key, { url: `https://localhost:${await freePort()}/${path}`, event_types: ['employee.created'] });
  const employeeCreated = (tenant: Tenant, empNumber: string) =>
    sendInbound(stack.baseUrl, tenant, envelope('employee.created', { emp_number: empNumber, name: 'Burst Worker', email: 'burst@example.com', employee_type: 'site_worker' }));
  /**
   * A busy and a quiet company, each with an endpoint of another key that has delivered before (a key's own changes are not sent back to its
   * endpoints), and `busyEvents` employee.created of the busy one (`<prefix>-0`, …) before one of the quiet one. No
   * worker serves this stack's task queues, so the runs started wait and send nothing.
   */
  async function busyAndQuiet(prefix: string, busyEvents: number): Promise<{ busy: Tenant; quiet: Tenant }> {
    const busy = await createTenant(stack.orm, ['admin']);
    const quiet = await createTenant(stack.orm, ['admin']);
    for (const tenant of [busy, quiet]) await answeringEndpoint(tenant, prefix.toLowerCase());
    for (let i = 0; i < busyEvents; i++) expect((await employeeCreated(busy, `${prefix}-${i}`)).status).toBe(200);
    expect((await employeeCreated(quiet, `${prefix}-Q`)).status).toBe(200);
    return { busy, quiet };
  }

  it("takes at most 20 events of a company per batch while many companies wait (its share of the batch when fewer do), every company's oldest first, and keeps each company's order", async () => {
    const busy = await createTenant(stack.orm, ['admin']);
    const quiet = await Promise.all(Array.from({ length: 5 }, () => createTenant(stack.orm, ['admin'])));
    const burst: string[] = [];
    for (let i = 0; i < 45; i++) {
      const sent = await employeeCreated(busy, `FAIR-${i}`);
      expect(sent.status).toBe(200);
      burst.push(sent.body.event_id);
    }
    const late: string[] = [];
    for (const [i, tenant] of quiet.entries()) {
      late.push((await employeeCreated(tenant, `FAIR-Q${i}`)).body.event_id);
    }

    const companies = [busy, ...quiet].map((tenant) => tenant.companyId);
    const dispatched = () =>
      stack
        .em()
        .execute<{ id: string }[]>('select id from outbox_events where company_id in (?) and dispatched_at is not null order by dispatched_at, created_at, id', [companies])
        .then((rows) => rows.map((r) => r.id));
    const dispatcher = quietDispatcher();
    try {
      // No company has endpoints: dispatching marks the events, and starts no workflow. Six companies wait: the busy
      // one's oldest 20 go with the others' one each.
      expect(await dispatcher.dispatchBatch()).toBe(25);
      const first = await dispatched();
      expect(late.every((id) => first.includes(id))).toBe(true);
      expect(first.filter((id) => !late.includes(id)).sort()).toEqual(burst.slice(0, 20).sort());
      // Then it waits alone and takes the rest in one batch.
      expect(await dispatcher.dispatchBatch()).toBe(25);
      expect(await dispatcher.dispatchBatch()).toBe(0);
      expect((await dispatched()).filter((id) => !late.includes(id)).sort()).toEqual([...burst].sort());
    } finally {
      await dispatcher.stop();
    }
  });

  it("starts a company's deliveries at its rate: a burst beyond it waits in the outbox, in order, while others go on", async () => {
    const { busy, quiet } = await busyAndQuiet('RATE', 3);
    const dispatcher = quietDispatcher({ companyStartsPerSecond: 1 });
    try {
      // One delivery a second: the batch takes one of the busy company's events, and the quiet company's.
      expect(await dispatcher.dispatchBatch()).toBe(2);
      expect(await undispatched(quiet)).toBe(0);
      expect(await undispatched(busy)).toBe(2);
      // The busy company then sits out while its bucket refills (a second): its events wait in the outbox.
      expect(await dispatcher.dispatchBatch()).toBe(0);
      expect(await undispatched(busy)).toBe(2);
      // Left to itself (no poll for a minute), the dispatcher comes back for the rest as the bucket refills, in order.
      await dispatcher.start();
      await waitFor(async () => (await undispatched(busy)) === 0, 15_000, "the busy company's last 2 events to be dispatched");
      expect(await dispatchOrder(busy)).toEqual(['RATE-0', 'RATE-1', 'RATE-2']);
    } finally {
      await dispatcher.stop();
    }
  });
  it("starts no more of a company's deliveries while its bound of them wait in Temporal's queue; as a worker takes them up, the next follow in order", async () => {
    const { busy, quiet } = await busyAndQuiet('QUEUE', 5);
    const deliveries = (tenant: Tenant) =>
      stack.em().execute<{ id: string }[]>('select id from webhook_deliveries where company_id = ? and not is_test order by created_at', [tenant.companyId]).then((rows) => rows.map((r) => r.id));
    // No worker serves this stack's task queues: the runs started stay queued until the test plays the worker's part.
    const dispatcher = quietDispatcher({ companyMaxQueued: 2 });
    const afterRecheck = () => new Promise((resolve) => setTimeout(resolve, 250));
    try {
      // Two of the busy company's deliveries fit its queue, and the quiet company's one fits its own.
      expect(await dispatcher.dispatchBatch()).toBe(3);
      expect(await undispatched(quiet)).toBe(0);
      expect(await undispatched(busy)).toBe(3);
      // Counted again, its queue is still full: nothing more is started.
      await afterRecheck();
      expect(await dispatcher.dispatchBatch()).toBe(0);
      // A worker takes one up (its first workflow task holds it behind its endpoint): one more event goes.
      const [first, second] = await deliveries(busy);
      await stack.em().execute(`update webhook_deliveries set held_reason = 'endpoint_busy', held_until = now() + interval '1 hour' where id = ?`, [first]);
      await afterRecheck();
      expect(await dispatcher.dispatchBatch()).toBe(1);
      expect(await undispatched(busy)).toBe(2);
      // One begun by recording an attempt, one whose run never began in two minutes (it is gone): two more go.
      await stack.em().execute(
        `insert into webhook_delivery_attempts (id, company_id, created_at, updated_at, delivery_id, attempt_number, trigger) values (gen_random_uuid(), ?, now(), now(), ?, 0, 'automatic')`,
        [busy.companyId, second],
      );
      const third = (await deliveries(busy))[2]!;
      await stack.em().execute(`update webhook_deliveries set created_at = created_at - interval '3 minutes' where id = ?`, [third]);
      await afterRecheck();
      expect(await dispatcher.dispatchBatch()).toBe(2);
      expect(await undispatched(busy)).toBe(0);
      expect(await dispatchOrder(busy)).toEqual(['QUEUE-0', 'QUEUE-1', 'QUEUE-2', 'QUEUE-3', 'QUEUE-4']);
    } finally {
      await dispatcher.stop();
    }
  });

  it("keeps a healthy endpoint's deliveries beyond its pipeline (one run until its first delivery, the rest deferred) in the outbox with their events, while the events' other endpoints get theirs; as its runs begin, the rest follow in order, none twice", async () => {
    const company = await createTenant(stack.orm, ['admin']);
    const [first, second] = [await addApiKey(stack, company), await addApiKey(stack, company)];
    const subscribe = async (key: string) => registerEndpoint(stack, key, { url: `https://localhost:${await freePort()}/pipeline`, event_types: ['employee.created'] });
    const employee = (n: string) => employeeCreated(company, `PIPE-${n}`);
    const deliveriesOf = (endpointId: string) =>
      stack
        .em()
        .execute<{ id: string; emp: string }[]>(
          `select d.id, o.data->>'emp_number' as emp from webhook_deliveries d join outbox_events o on o.id = d.event_id where d.endpoint_id = ? order by d.created_at`,
          [endpointId],
        );
    // Two attempts in flight at most: four runs at its door or on their way (no worker serves this stack: they stay there).
    const pipeline = HEALTHY_PIPELINE * 2;
    const dispatcher = quietDispatcher({ maxInFlightPerEndpoint: 2 });
    // A worker would record these: the run let through (held no more), its attempt and its success.
    const deliver = (deliveryId: string) =>
      stack
        .em()
        .execute(
          `update webhook_deliveries set status = 'delivered', attempt_count = 1, delivered_at = now(), last_attempt_at = now(), held_until = null, held_reason = null where id = ?`,
          [deliveryId],
        );
    try {
      const busy = await subscribe(first.key);
      // A new endpoint has one run until one of its deliveries is delivered: nothing says yet that its room comes soon,
      // so its second delivery is written deferred rather than left waiting in the outbox.
      const deferred = async () =>
        (await stack.em().execute<{ deferred: boolean }[]>('select deferred_since is not null as deferred from webhook_deliveries where endpoint_id = ? order by created_at', [busy.id])).map(
          (row) => row.deferred,
        );
      for (const n of ['W0', 'W1']) expect((await employee(n)).status).toBe(200);
      expect(await dispatcher.dispatchBatch()).toBe(2);
      const warmUp = await deliveriesOf(busy.id);
      expect(warmUp.map((d) => d.emp)).toEqual(['PIPE-W0', 'PIPE-W1']);
      expect(await deferred()).toEqual([false, true]);
      // Its one run still on its way: the deferred delivery is not started.
      expect(await dispatcher.startDeferred()).toBe(0);
      // Delivered: its whole pipeline opens, and the deferred delivery starts.
      await deliver(warmUp[0]!.id);
      expect(await dispatcher.startDeferred()).toBe(1);
      expect(await deferred()).toEqual([false, false]);
      await deliver(warmUp[1]!.id);

      for (let i = 0; i < pipeline; i++) expect((await employee(String(i))).status).toBe(200);
      expect(await dispatcher.dispatchBatch()).toBe(pipeline);
      // Its pipeline full, three more events: the other endpoint gets its deliveries, the busy one's wait with the events.
      const other = await subscribe(second.key);
      await answeredTestEvent(company, other.id);
      for (let i = pipeline; i < pipeline + 3; i++) expect((await employee(String(i))).status).toBe(200);
      expect(await dispatcher.dispatchBatch()).toBe(0);
      expect(await undispatched(company)).toBe(3);
      expect((await deliveriesOf(other.id)).map((d) => d.emp)).toEqual([0, 1, 2].map((i) => `PIPE-${pipeline + i}`));
      expect(await deliveriesOf(busy.id)).toHaveLength(2 + pipeline);
      // Two of its runs begin (a worker would record their attempts): two events go, in order; the third waits on.
      const begun = (await deliveriesOf(busy.id)).slice(2, 4);
      for (const delivery of begun) {
        await stack.em().execute(
          `insert into webhook_delivery_attempts (id, company_id, created_at, updated_at, delivery_id, attempt_number, trigger) values (gen_random_uuid(), ?, now(), now(), ?, 0, 'automatic')`,
          [company.companyId, delivery.id],
        );
      }
      expect(await dispatcher.dispatchBatch()).toBe(2);
      expect(await undispatched(company)).toBe(1);
      expect((await deliveriesOf(busy.id)).map((d) => d.emp)).toEqual(['PIPE-W0', 'PIPE-W1', ...Array.from({ length: pipeline + 2 }, (_, i) => `PIPE-${i}`)]);
      // The other endpoint's deliveries were written once.
      expect(await deliveriesOf(other.id)).toHaveLength(3);
    } finally {
      await dispatcher.stop();
    }
  });

  it("marks the started runs it can lock at once, and one a run's attempt holds once it is let go: it waits for no row while holding others", async () => {
    const company = await createTenant(stack.orm, ['admin']);
    const endpoint = await answeringEndpoint(company, 'locked');
    for (const n of ['1', '2']) expect((await employeeCreated(company, `LOCKED-${n}`)).status).toBe(200);
    await quietDispatcher().dispatchBatch();
    // Both deferred, their claims over; one's row is locked once its run is started, as its first attempt (eager
    // start) locks it while it finishes.
    const deferred = await stack
      .em()
      .execute<{ id: string }[]>('update webhook_deliveries set deferred_since = now(), start_claimed_until = null where endpoint_id = ? and not is_test returning id', [endpoint.id]);
    expect(deferred).toHaveLength(2);
    const [free, locked] = deferred.map((row) => row.id) as [string, string];
    const attempt = new PgClient({ connectionString: stack.config.databaseUrl });
    await attempt.connect();
    const dispatcher = dispatcherStartingThrough(async (delivery, start) => {
      const started = await start(delivery);
      if (delivery.input.deliveryId === locked) {
        await attempt.query('begin');
        await attempt.query('select 1 from webhook_deliveries where id = $1 for update', [locked]);
      }
      return started;
    });
    const deferredNow = async (id: string) =>
      (await stack.em().execute<{ deferred: boolean }[]>('select deferred_since is not null as deferred from webhook_deliveries where id = ?', [id]))[0]!.deferred;
    try {
      const starting = dispatcher.startDeferred();
      // Looked at often: the dispatcher comes back for the locked row for a second at most.
      for (let polls = 0; polls < 500 && (await deferredNow(free)); polls++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(await deferredNow(free)).toBe(false);
      expect(await deferredNow(locked)).toBe(true);
      await attempt.query('commit');
      expect(await starting).toBe(2);
      expect(await deferredNow(locked)).toBe(false);
    } finally {
      await attempt.end();
      await dispatcher.stop();
    }
  });

  it("claims and writes the next events while a batch's runs to a new endpoint are being started, and marks them once they are", async () => {
    const company = await createTenant(stack.orm, ['admin']);
    // None of its deliveries delivered yet: a pipeline of one run, what it leaves deferred.
    const endpoint = await subscribedEndpoint(company, 'pipelined');
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    // The endpoint's runs whose starts were asked for; the first is held up until released.
    const asked: string[] = [];
    const dispatcher = dispatcherStartingThrough(async (delivery, start) => {
      if (delivery.input.endpointId === endpoint.id && asked.push(delivery.input.deliveryId) === 1) await released;
      return start(delivery);
    });
    const deliveries = () =>
      stack
        .em()
        .execute<{ emp: string; starting: boolean; deferred: boolean }[]>(
          `select o.data->>'emp_number' as emp, d.start_claimed_until is not null as starting, d.deferred_since is not null as deferred
             from webhook_deliveries d join outbox_events o on o.id = d.event_id where d.endpoint_id = ? order by o.created_at`,
          [endpoint.id],
        );
    try {
      expect((await employeeCreated(company, 'PIPELINED-1')).status).toBe(200);
      await dispatcher.start();
      await waitFor(async () => asked.length === 1, 10_000, "the first run's start");
      expect((await employeeCreated(company, 'PIPELINED-2')).status).toBe(200);
      // Written while the first run's start is held up (that delivery deferred until its run is marked started): deferred,
      // as the endpoint's one run is taken.
      await waitFor(async () => (await deliveries()).length === 2, 10_000, "the second event's delivery");
      expect(await deliveries()).toEqual([
        { emp: 'PIPELINED-1', starting: true, deferred: true },
        { emp: 'PIPELINED-2', starting: false, deferred: true },
      ]);
      expect(asked).toHaveLength(1);
      release();
      await waitFor(async () => !(await deliveries())[0]!.starting, 10_000, 'the first run marked started');
      expect(await deliveries()).toEqual([
        { emp: 'PIPELINED-1', starting: false, deferred: false },
        { emp: 'PIPELINED-2', starting: false, deferred: true },
      ]);
    } finally {
      release();
      await dispatcher.stop();
    }
  });

  it('leaves no hold on a deferred delivery claimed again after its run had ended, which would count at its endpoint for ever', async () => {
    const company = await createTenant(stack.orm, ['admin']);
    const endpoint = await answeringEndpoint(company, 'ended');
    const dispatcher = quietDispatcher();
    try {
      expect((await employeeCreated(company, 'ENDED-1')).status).toBe(200);
      // Events an earlier test left undispatched may come in the same batch.
      expect(await dispatcher.dispatchBatch()).toBeGreaterThanOrEqual(1);
      // As a dispatcher whose marking of the started run failed leaves it: still deferred, its claim over; meanwhile the
      // run delivered it.
      const ended = await stack.em().execute<{ id: string }[]>(
        `update webhook_deliveries set deferred_since = now(), start_claimed_until = null, status = 'delivered', attempt_count = 1, delivered_at = now()
          where endpoint_id = ? and not is_test returning id`,
        [endpoint.id],
      );
      expect(ended).toHaveLength(1);
      const delivery = ended[0]!;
      expect(await dispatcher.startDeferred()).toBeGreaterThanOrEqual(1);
      const [row] = await stack
        .em()
        .execute<{ deferred: boolean; held: boolean; status: string }[]>(
          'select deferred_since is not null as deferred, held_until is not null or held_reason is not null as held, status from webhook_deliveries where id = ?',
          [delivery.id],
        );
      expect(row).toEqual({ deferred: false, held: false, status: 'delivered' });
    } finally {
      await dispatcher.stop();
    }
  });
});
