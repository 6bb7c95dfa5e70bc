import { createLogger } from '../../src/logger';
import { OutboxDispatcher } from '../../src/delivery/outbox-dispatcher';
import { temporalDeliveryWorkflows } from '../../src/temporal/temporal-delivery-workflows';
import { createTenant, envelope, sendInbound, startStack, type TestStack } from '../helpers/stack';

/** The outbox dispatcher serves companies in turns: one company's burst does not put another's events at the back. */
describe('outbox dispatcher fairness', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack({ worker: false, dispatcher: false });
  });
  afterAll(() => stack.close());

  it("takes at most 20 events of a company per batch, every company's oldest first, and keeps each company's order", async () => {
    const busy = await createTenant(stack.orm, ['admin']);
    const quiet = await createTenant(stack.orm, ['admin']);
    const burst: string[] = [];
    for (let i = 0; i < 45; i++) {
      const sent = await sendInbound(stack.baseUrl, busy, envelope('employee.created', { emp_number: `FAIR-${i}`, name: 'Burst Worker', email: 'burst@example.com', employee_type: 'site_worker' }));
      expect(sent.status).toBe(200);
      burst.push(sent.body.event_id);
    }
    const late = (await sendInbound(stack.baseUrl, quiet, envelope('employee.created', { emp_number: 'FAIR-Q', name: 'Quiet Worker', email: 'quiet@example.com', employee_type: 'site_worker' }))).body.event_id;

    const dispatched = () =>
      stack
        .em()
        .execute<{ id: string }[]>('select id from outbox_events where company_id in (?, ?) and dispatched_at is not null order by dispatched_at, created_at, id', [busy.companyId, quiet.companyId])
        .then((rows) => rows.map((r) => r.id));
    const dispatcher = new OutboxDispatcher({
      orm: stack.orm,
      deliveryWorkflows: temporalDeliveryWorkflows(stack.temporal, stack.config.temporal.taskQueues),
      databaseUrl: stack.config.databaseUrl,
      pollMs: 60_000,
      logger: createLogger('silent'),
    });
    try {
      // Neither company has endpoints: dispatching marks the events, and starts no workflow.
      expect(await dispatcher.dispatchBatch()).toBe(21);
      const first = await dispatched();
      expect(first).toContain(late);
      expect(first.filter((id) => id !== late).sort()).toEqual(burst.slice(0, 20).sort());
      expect(await dispatcher.dispatchBatch()).toBe(20);
      expect(await dispatcher.dispatchBatch()).toBe(5);
      expect(await dispatcher.dispatchBatch()).toBe(0);
      expect((await dispatched()).filter((id) => id !== late).sort()).toEqual([...burst].sort());
    } finally {
      await dispatcher.stop();
    }
  });
});
