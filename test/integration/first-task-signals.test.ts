import { temporal } from '@temporalio/proto';
import { temporalSignal } from '../../workflows/messages';
import { deliveryWorkflowId, WEBHOOK_DELIVERY } from '../../workflows/webhook-delivery.contract';
import { closedRuns, historyOf } from '../helpers/delivery-runs';
import { startReceiver, type TestReceiver } from '../helpers/https-receiver';
import { createTenant, envelope, sendInbound, startStack, type Tenant, type TestStack } from '../helpers/stack';
import { addApiKey, registerEndpoint, waitForDeliveryStatus } from '../helpers/webhooks';

/**
 * Issue 60: a signal that comes while a run's first workflow task makes its first attempt (a local activity) makes the
 * server refuse that task's completion (UnhandledCommand), and the task, its local activity with it, runs again. Under a
 * burst, endpointReady came so to a third of the runs, whose second first attempt found the delivery delivered and failed
 * the run. Now the task done again finds the attempt recorded and ends the run delivered, sending nothing.
 */
describe("signals during a run's first attempt", () => {
  let stack: TestStack;
  let sender: Tenant;
  let subscriber: Tenant;
  let hook: TestReceiver;

  beforeAll(async () => {
    stack = await startStack();
    sender = await createTenant(stack.orm, ['admin']);
    subscriber = await addApiKey(stack, sender);
    hook = await startReceiver();
  });
  afterAll(async () => {
    await hook.close();
    await stack.close();
  });

  it('leave the run completed, with one attempt recorded and one request received', async () => {
    const signalled: Promise<void>[] = [];
    // The endpoint answers after 300 ms (within the second the first task waits for it); meanwhile the run is signalled twice.
    hook.respondWith((request) => {
      const run = stack.temporal.workflow.getHandle(deliveryWorkflowId(String(request.headers['x-webhook-id'])));
      for (let i = 0; i < 2; i++) signalled.push(run.signal(temporalSignal(WEBHOOK_DELIVERY.signals.endpointReady)));
      return { status: 200, body: '{"received":true}', delayMs: 300 };
    });
    await registerEndpoint(stack, subscriber.key, { url: hook.url, event_types: ['employee.created'] });

    const sent = await sendInbound(stack.baseUrl, sender, envelope('employee.created', { emp_number: 'SIG-1', name: 'Signalled', email: 's@example.com', employee_type: 'office' }));
    expect(sent.status).toBe(200);
    const [received] = await hook.waitForRequests(1);
    const deliveryId = String(received!.headers['x-webhook-id']);
    await Promise.all(signalled);
    await waitForDeliveryStatus(stack, subscriber.key, deliveryId, ['delivered']);
    const [run] = await closedRuns(stack, deliveryId, 1);

    expect(run!.status).toBe('COMPLETED');
    expect(await stack.temporal.workflow.getHandle(deliveryWorkflowId(deliveryId)).result()).toEqual({ status: 'delivered', attempts: 1 });
    const attempts = await stack.em().execute<{ attempt_number: number; outcome: string }[]>(
      'select attempt_number, outcome from webhook_delivery_attempts where delivery_id = ? order by attempt_number',
      [deliveryId],
    );
    expect(attempts).toEqual([{ attempt_number: 0, outcome: 'succeeded' }]);
    // The race this is about took place: the signals came during the first task, whose completion was refused.
    const events = await historyOf(stack, deliveryId);
    const unhandled = temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND;
    expect(events.filter((event) => event.workflowExecutionSignaledEventAttributes)).toHaveLength(2);
    expect(events.filter((event) => event.workflowTaskFailedEventAttributes).map((event) => event.workflowTaskFailedEventAttributes!.cause)).toEqual([unhandled]);
    // Once more after the run closed: still the one request.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(hook.requests).toHaveLength(1);
  });
});
