import { inboundSender, restClient } from '../helpers/api-client';
import { outboxOf, seedProject } from '../helpers/fixtures';
import { spawnEntryPoint, stopProcess, waitFor, workerStarted } from '../helpers/processes';
import { createTenant, processEnvOf, startStack, testConfig, type TestStack } from '../helpers/stack';

/**
 * A completion report waits for approval when its worker is killed with SIGKILL. The approval arrives while
 * no worker runs (202: Temporal keeps the signal); a new worker applies it: the report is approved, the work
 * order completed, and each event recorded once.
 */
describe('worker killed while a report waits for approval', () => {
  let stack: TestStack;

  beforeAll(async () => {
    // The API answers 202 after 2 s instead of waiting for a worker that is not there.
    stack = await startStack({ worker: false, config: await testConfig({ INBOUND_WAIT_MS: '2000' }) });
  });
  afterAll(() => stack.close());

  it('loses nothing: the approval sent meanwhile completes the work order once on the new worker', async () => {
    const tenant = await createTenant(stack.orm, ['admin']);
    const api = restClient(stack, tenant);
    const inbound = inboundSender(stack, tenant);
    const workOrder = await api.create('work-orders', { title: 'Roofing', project_id: await seedProject(stack, tenant), status: 'in_progress' });
    const first = spawnEntryPoint('worker/main.ts', processEnvOf(stack));
    let second: ReturnType<typeof spawnEntryPoint> | undefined;
    try {
      await workerStarted(first, 'first');
      const report = await api.create('completion-reports', { work_order_id: workOrder.id, completion_summary: 'Roof done' });
      const handle = stack.temporal.workflow.getHandle(report.workflow_id);
      // The workflow has confirmed the report and waits on its deadline timer.
      await waitFor(async () => (await handle.fetchHistory()).events?.some((e) => e.timerStartedEventAttributes), 30_000, 'the approval wait to begin');
      await stopProcess(first, 'SIGKILL');

      const approval = await inbound.send('report.completion_approved', { work_order_number: workOrder.work_order_number, approval_notes: 'Checked from the ground' });
      expect(approval.status).toBe(202);
      expect(approval.body).toEqual({
        success: true,
        message: `Approval of the completion report of work order ${workOrder.work_order_number} accepted; it is applied as soon as a worker runs`,
        event_id: expect.any(String),
        record_id: report.id,
      });
      expect((await api.get(`/completion-reports/${report.id}`)).body.approval_status).toBe('pending');
      expect((await api.get(`/work-orders/${workOrder.id}`)).body.status).toBe('in_progress');

      second = spawnEntryPoint('worker/main.ts', processEnvOf(stack));
      await workerStarted(second, 'second');
      expect(await handle.result()).toEqual({ outcome: 'approved', eventId: approval.body.event_id });
      expect((await api.get(`/completion-reports/${report.id}`)).body).toMatchObject({ approval_status: 'approved', decision_notes: 'Checked from the ground' });
      expect((await api.get(`/work-orders/${workOrder.id}`)).body.status).toBe('complete');
      const events = (await outboxOf(stack, tenant.companyId)).map((e) => e.event_type).filter((t) => t.startsWith('report.') || t === 'work_order.status_changed' || t === 'workorder.completed');
      expect(events).toEqual(['report.completion_submitted', 'report.completion_approved', 'work_order.status_changed', 'workorder.completed']);
      console.log(`Worker SIGKILL while a completion report waited: approval sent with no worker (202), applied by the new worker; events: ${events.join(', ')}`);
    } finally {
      await stopProcess(first, 'SIGKILL');
      if (second) await stopProcess(second);
    }
  }, 300_000);
});
