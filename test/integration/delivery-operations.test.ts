import { WorkflowUpdateFailedError } from '@temporalio/client';
import { deliveryWorkflowId } from '../../workflows/webhook-delivery.contract';
import { attemptFailuresOf, closedRuns, failureDetails, historyOf, replayWithCurrentCode, runsOf, startInput } from '../helpers/delivery-runs';
import { startReceiver, type TestReceiver } from '../helpers/https-receiver';
import { waitFor } from '../helpers/processes';
import { createTenant, envelope, request, sendInbound, startStack, testConfig, type Tenant, type TestStack } from '../helpers/stack';
import { temporalCli } from '../helpers/temporal-cli';
import { addApiKey, deliveryIdsOf, registerEndpoint, verifiedAsReceiver, waitForDeliveryStatus } from '../helpers/webhooks';

let employeeSeq = 0;
const employee = () => envelope('employee.created', { emp_number: `OPS-${++employeeSeq}`, name: 'Dana Builder', email: 'dana@example.com', employee_type: 'site_worker' });
const MAINTENANCE = '{"error":"database maintenance"}';

interface FailedDelivery {
  sender: Tenant;
  subscriber: Tenant;
  hook: TestReceiver;
  deliveryId: string;
  eventId: string;
  endpointId: string;
  secret: string;
}

/** A stack of its own, and a way to make a delivery fail 6 times. */
function operatorStack(settings: Record<string, string> = {}) {
  const ctx = {} as { stack: TestStack; receivers: TestReceiver[] };
  beforeAll(async () => {
    ctx.stack = await startStack({ config: await testConfig({ WEBHOOK_TIMEOUT_MS: '1500', ...settings }) });
    ctx.receivers = [];
  });
  afterAll(async () => {
    await Promise.all(ctx.receivers.map((r) => r.close()));
    await ctx.stack.close();
  });

  /** A delivery whose receiver answered 503 with a body to all 6 attempts; a company of its own, so it is its endpoint's only one. */
  async function failedDelivery(): Promise<FailedDelivery> {
    const sender = await createTenant(ctx.stack.orm, ['admin']);
    const subscriber = await addApiKey(ctx.stack, sender);
    const hook = await startReceiver();
    ctx.receivers.push(hook);
    hook.respondWith(() => ({ status: 503, body: MAINTENANCE, headers: { 'Content-Type': 'application/json' } }));
    const endpoint = await registerEndpoint(ctx.stack, subscriber.key, { url: hook.url, event_types: ['employee.created'] });
    const sent = await sendInbound(ctx.stack.baseUrl, sender, employee());
    const [deliveryId] = await waitFor(async () => {
      const ids = await deliveryIdsOf(ctx.stack, endpoint.id);
      return ids.length ? ids : null;
    });
    const failed = await waitForDeliveryStatus(ctx.stack, subscriber.key, deliveryId!, ['failed']);
    expect(failed.attempt_count).toBe(6);
    return { sender, subscriber, hook, deliveryId: deliveryId!, eventId: sent.body.event_id, endpointId: endpoint.id, secret: endpoint.secret };
  }

  /** The attempt rows, every column, as stored. */
  const attemptRows = (deliveryId: string) =>
    ctx.stack.em().execute<Record<string, unknown>[]>('select * from webhook_delivery_attempts where delivery_id = ? order by attempt_number', [deliveryId]);

  return { ctx, failedDelivery, attemptRows };
}

describe('a delivery that failed 6 times', () => {
  const { ctx, failedDelivery } = operatorStack();

  /** Waits for the two runs of a failed delivery: the one that used up the attempts, and the one waiting for a re-run. */
  const failedAndWaiting = (deliveryId: string) =>
    waitFor(async () => {
      const runs = await runsOf(ctx.stack, deliveryId);
      return runs.length === 2 && runs[0]!.status === 'FAILED' && runs[1]!.status === 'RUNNING' && runs;
    }, 30_000, 'a failed run and a waiting one');

  const currentDetails = async (deliveryId: string) =>
    (await ctx.stack.temporal.workflow.getHandle(deliveryWorkflowId(deliveryId)).query<{ currentDetails: string }>('__temporal_workflow_metadata')).currentDetails;

  it('fails its run with every attempt as a failed activity that says why, waits for a re-run, and leaves the open failed list once delivered', async () => {
    const { stack } = ctx;
    const { subscriber, hook, deliveryId, eventId } = await failedDelivery();
    const [failedRun, waitingRun] = await failedAndWaiting(deliveryId);

    const failedHistory = await historyOf(stack, deliveryId, failedRun!.runId);
    const attemptFailures = attemptFailuresOf(failedHistory);
    expect(attemptFailures).toHaveLength(6);
    attemptFailures.forEach((failure, i) => {
      expect(failure.message).toMatch(/^HTTP 503 after \d+ ms: \{"error":"database maintenance"\}$/);
      expect(failureDetails(failure)).toEqual({ attemptNumber: i, statusCode: 503, error: 'HTTP 503', durationMs: expect.any(Number), responseExcerpt: MAINTENANCE, retryAfterMs: null });
    });
    // The first attempt in the run's first task (a local activity), the five after it as activities of their own.
    expect(failedHistory.filter((e) => e.markerRecordedEventAttributes?.failure)).toHaveLength(1);
    expect(failedHistory.filter((e) => e.activityTaskFailedEventAttributes)).toHaveLength(5);
    const closing = failedHistory.at(-1)!.workflowExecutionFailedEventAttributes!;
    expect(closing.failure!.message).toMatch(/^Delivery Failed after 6 attempt\(s\)\. Last: HTTP 503 after \d+ ms: \{"error":"database maintenance"\}\.$/);
    expect(closing.failure!.applicationFailureInfo!.type).toBe('DeliveryFailed');

    const details = await waitFor(async () => (await currentDetails(deliveryId)) || null, 15_000, 'the details of the waiting run');
    expect(details).toMatch(/^\*\*failed\*\* · Failed after 6 attempt\(s\)\. Last: HTTP 503 .*Waiting for a re-run/);
    const described = await stack.temporal.workflow.getHandle(deliveryWorkflowId(deliveryId)).describe();
    expect(described.runId).toBe(waitingRun!.runId);
    expect(Object.fromEntries(described.typedSearchAttributes.getAll().map((p) => [p.key.name, p.value]))).toMatchObject({
      EndpointHost: 'localhost',
      EventId: eventId,
      DeliveryStatus: 'failed',
    });

    // The operations guide's "open failed" query, here by the event id a subscriber would report.
    const openFailed = `EventId = "${eventId}" AND ExecutionStatus = "Running" AND DeliveryStatus = "failed"`;
    const listed = async () => {
      const ids: string[] = [];
      for await (const execution of stack.temporal.workflow.list({ query: openFailed })) ids.push(execution.runId);
      return ids;
    };
    expect(await waitFor(async () => (await listed()).length > 0 && listed())).toEqual([waitingRun!.runId]);

    const alerts = await request(stack.baseUrl, 'GET', '/api/v1/webhook-alerts?status=open', { key: subscriber.key });
    expect(alerts.body.data).toContainEqual(expect.objectContaining({ kind: 'delivery_failed', delivery_id: deliveryId, resolved_at: null }));

    hook.respondWith(() => ({ status: 200, body: '{"received":true}' }));
    const retried = await request(stack.baseUrl, 'POST', `/api/v1/webhook-deliveries/${deliveryId}/retry`, { key: subscriber.key, body: { reason: 'maintenance over' } });
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ status: 'delivered', attempt_count: 7 });
    expect(hook.requests.at(-1)!.headers['x-webhook-retry']).toBe('6');

    // The alert is resolved, the 200 showed the new status, and the delivery is no longer an open failure.
    const open = await request(stack.baseUrl, 'GET', '/api/v1/webhook-alerts?status=open', { key: subscriber.key });
    expect(open.body.data.map((a: any) => a.delivery_id)).not.toContain(deliveryId);
    const resolved = await request(stack.baseUrl, 'GET', '/api/v1/webhook-alerts?status=resolved', { key: subscriber.key });
    expect(resolved.body.data).toContainEqual(expect.objectContaining({ delivery_id: deliveryId, resolved_at: expect.any(String) }));
    await waitFor(async () => (await listed()).length === 0, 15_000, 'the open failed list to drop the delivery');

    await replayWithCurrentCode(
      await Promise.all([failedRun!, waitingRun!].map(async (run) => ({ workflowId: deliveryWorkflowId(deliveryId), events: await historyOf(stack, deliveryId, run.runId) }))),
    );
  });

  it('refuses a rerun update with a bad input or a wrong name, and shows a signal it ignored; nothing is sent', async () => {
    const { stack } = ctx;
    const { hook, deliveryId } = await failedDelivery();
    await failedAndWaiting(deliveryId);
    const workflowId = deliveryWorkflowId(deliveryId);
    // The CLI quotes the refusal inside its own message.
    const update = async (name: string, input: string) => {
      const result = await temporalCli(stack.config.temporal.address, ['workflow', 'update', 'execute', '--workflow-id', workflowId, '--name', name, '--input', input]);
      return { ...result, stderr: result.stderr.replace(/\\"/g, '"') };
    };

    const misspelt = await update('rerun', '{"reasn": "typo"}');
    expect(misspelt.code).not.toBe(0);
    expect(misspelt.stderr).toContain('Unknown field "reasn": the only field is "reason"');
    const notAnObject = await update('rerun', '"endpoint fixed"');
    expect(notAnObject.code).not.toBe(0);
    expect(notAnObject.stderr).toContain('The input must be a JSON object such as {"reason": "endpoint fixed"}');
    const wrongType = await update('rerun', '{"reason": 5}');
    expect(wrongType.stderr).toContain('"reason" must be a string of at most 500 characters');
    const unknownName = await update('retry', '{}');
    expect(unknownName.code).not.toBe(0);
    expect(unknownName.stderr).toMatch(/retry/);
    await expect(stack.temporal.workflow.getHandle(workflowId).executeUpdate('rerun', { args: [[]] })).rejects.toThrow(WorkflowUpdateFailedError);

    // A signal cannot be refused (the old "rerun" signal, say): it is logged and shown in the run's details.
    const signal = await temporalCli(stack.config.temporal.address, ['workflow', 'signal', '--workflow-id', workflowId, '--name', 'rerun', '--input', '{}']);
    expect(signal.code).toBe(0);
    await waitFor(async () => (await currentDetails(deliveryId)).includes('Ignored the signal "rerun": this workflow takes no signals'), 15_000, 'the ignored signal in the details');

    expect(hook.requests).toHaveLength(6);
    const [row] = await stack.em().execute<{ attempt_count: number; status: string }[]>('select attempt_count, status from webhook_deliveries where id = ?', [deliveryId]);
    expect(row).toEqual({ attempt_count: 6, status: 'failed' });
  });

  it('refuses a run started by hand whose input or workflow id does not match the database', async () => {
    const { stack } = ctx;
    const { sender, hook, deliveryId, endpointId } = await failedDelivery();
    await failedAndWaiting(deliveryId);
    const workflowId = deliveryWorkflowId(deliveryId);
    await stack.temporal.workflow.getHandle(workflowId).terminate('closed for the test');
    const input = { deliveryId, companyId: sender.companyId, endpointId, eventType: 'employee.created' };

    const runsOf = async (id: string) => {
      const all: { status: string; runId: string }[] = [];
      for await (const e of stack.temporal.workflow.list({ query: `WorkflowId = "${id}"` })) all.push({ status: e.status.name, runId: e.runId });
      return all;
    };
    const startByHand = async (id: string, startedWith: unknown) => {
      // The run this start makes: visibility may list the earlier runs of the id first, or before it.
      const earlier = new Set((await runsOf(id)).map((r) => r.runId));
      const started = await temporalCli(stack.config.temporal.address, [
        'workflow', 'start', '--type', 'webhookDelivery', '--task-queue', stack.config.temporal.taskQueues.deliveries, '--workflow-id', id, '--input', JSON.stringify(startedWith),
      ]);
      expect(started.code).toBe(0);
      const runs = await waitFor(async () => {
        const run = (await runsOf(id)).find((r) => !earlier.has(r.runId));
        return run && run.status !== 'RUNNING' && [run];
      }, 30_000, `the run of ${id} to close`);
      expect(runs[0]!.status).toBe('FAILED');
      const events = (await stack.temporal.workflow.getHandle(id, runs[0]!.runId).fetchHistory()).events!;
      const failure = events.at(-1)!.workflowExecutionFailedEventAttributes!.failure!;
      // The plan's refusal fails the run itself (a local activity); a run begun before plans were local fails with it as the activity's cause.
      const refusal = failure.applicationFailureInfo ? failure : failure.cause;
      return { message: refusal?.message, type: refusal?.applicationFailureInfo?.type };
    };

    expect(await startByHand(workflowId, { ...input, eventType: 'project.created' })).toEqual({
      type: 'DeliveryRunRefused',
      message: `The input does not match delivery ${deliveryId} in the database: eventType: "project.created" ≠ "employee.created"`,
    });
    expect((await startByHand(workflowId, { ...input, companyId: '01a20000-0000-7000-8000-000000000000' })).message).toContain('companyId:');
    expect((await startByHand(workflowId, { ...input, trigger: 'automatic' })).message).toContain('unknown: trigger');
    expect((await startByHand(workflowId, { ...input, endpointId: 'endpoint-1' })).message).toBe('endpointId must be UUIDs');
    expect((await startByHand(workflowId, { deliveryId, retryDelaysMs: [], firstAttemptNumber: 0, trigger: 'manual' })).message).toContain(
      'missing or not a string: companyId, endpointId, eventType',
    );
    expect((await startByHand(deliveryWorkflowId('01a20000-0000-7000-8000-000000000001'), input)).message).toContain(`does not name delivery ${deliveryId}`);

    expect(hook.requests).toHaveLength(6);
    expect((await stack.em().execute('select 1 from webhook_delivery_attempts where delivery_id = ?', [deliveryId])).length).toBe(6);
  });

  it('records a cancelled delivery as cancelled, and re-runs it', async () => {
    const { stack } = ctx;
    const { subscriber, hook, deliveryId, secret } = await failedDelivery();
    const [, waitingRun] = await failedAndWaiting(deliveryId);
    const handle = stack.temporal.workflow.getHandle(deliveryWorkflowId(deliveryId));
    await handle.cancel();

    const cancelled = await waitForDeliveryStatus(stack, subscriber.key, deliveryId, ['cancelled']);
    expect(cancelled).toMatchObject({ status: 'cancelled', attempt_count: 6 });
    await waitFor(async () => (await handle.describe()).status.name === 'CANCELLED', 15_000, 'the run to close as cancelled');
    const described = await stack.temporal.workflow.getHandle(deliveryWorkflowId(deliveryId), waitingRun!.runId).describe();
    expect(described.typedSearchAttributes.getAll().find((p) => p.key.name === 'DeliveryStatus')?.value).toBe('cancelled');
    expect((await request(stack.baseUrl, 'GET', '/api/v1/webhook-deliveries?status=cancelled', { key: subscriber.key })).body.data.map((d: any) => d.id)).toContain(deliveryId);

    hook.respondWith(() => ({ status: 200 }));
    const retried = await request(stack.baseUrl, 'POST', `/api/v1/webhook-deliveries/${deliveryId}/retry`, { key: subscriber.key });
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ status: 'delivered', attempt_count: 7 });
    const rerun = hook.requests.at(-1)!;
    expect(rerun.headers['x-webhook-id']).toBe(deliveryId);
    expect(rerun.headers['x-webhook-retry']).toBe('6');
    expect(verifiedAsReceiver(secret, rerun)).toBe(true);
  });
});

describe('a delivery whose workflow has closed', () => {
  // Failed deliveries wait one second for a re-run, then their workflow closes, as after WEBHOOK_RERUN_WAIT.
  const { ctx, failedDelivery, attemptRows } = operatorStack({ WEBHOOK_RERUN_WAIT: '1' });

  it('is re-run from the UI path (a new run like the last one) and from REST, every attempt record kept as it was', async () => {
    const { stack } = ctx;
    const [byUi, byRest] = await Promise.all([failedDelivery(), failedDelivery()]);
    for (const { deliveryId } of [byUi, byRest]) expect((await closedRuns(stack, deliveryId, 2)).map((r) => r.status)).toEqual(['FAILED', 'FAILED']);
    const before = { ui: await attemptRows(byUi.deliveryId), rest: await attemptRows(byRest.deliveryId) };
    expect(before.ui).toHaveLength(6);
    for (const { hook } of [byUi, byRest]) hook.respondWith(() => ({ status: 200 }));

    // "Start Workflow Like This One": the same type, id, task queue and input as the last run.
    const [latest] = (await runsOf(stack, byUi.deliveryId)).slice(-1);
    const input = startInput(await historyOf(stack, byUi.deliveryId, latest!.runId));
    expect(input).toEqual({ deliveryId: byUi.deliveryId, companyId: byUi.sender.companyId, endpointId: byUi.endpointId, eventType: 'employee.created' });
    const started = await temporalCli(stack.config.temporal.address, [
      'workflow', 'start', '--type', 'webhookDelivery', '--task-queue', stack.config.temporal.taskQueues.deliveries,
      '--workflow-id', deliveryWorkflowId(byUi.deliveryId), '--input', JSON.stringify(input),
    ]);
    expect(started.code).toBe(0);
    const [fromUi] = await byUi.hook.waitForRequests(7).then((all) => all.slice(6));
    expect(fromUi!.headers['x-webhook-id']).toBe(byUi.deliveryId);
    expect(fromUi!.headers['x-webhook-retry']).toBe('6');
    await waitForDeliveryStatus(stack, byUi.subscriber.key, byUi.deliveryId, ['delivered']);

    const retried = await request(stack.baseUrl, 'POST', `/api/v1/webhook-deliveries/${byRest.deliveryId}/retry`, { key: byRest.subscriber.key });
    expect(retried.status).toBe(200);
    expect(retried.body.attempts.map((a: any) => [a.attempt_number, a.trigger, a.outcome, a.status_code])).toEqual([
      ...[0, 1, 2, 3, 4, 5].map((n) => [n, 'automatic', 'retryable_failure', 503]),
      [6, 'manual', 'succeeded', 200],
    ]);
    expect(byRest.hook.requests.at(-1)!.headers['x-webhook-retry']).toBe('6');

    for (const [name, { deliveryId }] of [['ui', byUi], ['rest', byRest]] as const) {
      const after = await attemptRows(deliveryId);
      expect(after.slice(0, 6)).toEqual(before[name]);
      expect(after[6]).toMatchObject({ attempt_number: 6, trigger: 'manual', outcome: 'succeeded', status_code: 200 });
    }

    // A delivered delivery is not sent again, however its run is started: the run ends delivered, by the attempt that was.
    const again = await temporalCli(stack.config.temporal.address, [
      'workflow', 'execute', '--type', 'webhookDelivery', '--task-queue', stack.config.temporal.taskQueues.deliveries,
      '--workflow-id', deliveryWorkflowId(byUi.deliveryId), '--input', JSON.stringify(input),
    ]);
    expect({ code: again.code, output: again.code === 0 ? '' : again.stdout + again.stderr }).toEqual({ code: 0, output: '' });
    expect(await stack.temporal.workflow.getHandle(deliveryWorkflowId(byUi.deliveryId)).result()).toEqual({ status: 'delivered', attempts: 7 });
    expect(byUi.hook.requests).toHaveLength(7);
  });

  it('is re-run again and again while its runs keep closing, and never answers with a 5xx', async () => {
    const { stack } = ctx;
    const owner = await createTenant(stack.orm, ['admin']);
    // Nothing listens on port 9, so each attempt fails at once; a test delivery's run closes after its attempt,
    // often between the API's look at the run and its update to it (the fuzz test found a 500 there).
    const endpoint = await registerEndpoint(stack, owner.key, { url: 'https://127.0.0.1:9/hook', event_types: ['*'] });
    const sent = await request(stack.baseUrl, 'POST', `/api/v1/webhook-endpoints/${endpoint.id}/test`, { key: owner.key });
    expect(sent.status).toBe(200);
    const retry = () => request(stack.baseUrl, 'POST', `/api/v1/webhook-deliveries/${sent.body.id}/retry`, { key: owner.key, body: {} });
    const answers: number[] = [];
    for (let i = 0; i < 15; i++) answers.push((await retry()).status);
    answers.push(...(await Promise.all(Array.from({ length: 5 }, retry))).map((r) => r.status));
    expect(answers.filter((status) => ![200, 202, 409].includes(status))).toEqual([]);
    const attempts = (await attemptRows(sent.body.id)).map((a) => a.attempt_number);
    expect(attempts.length).toBeGreaterThan(1);
    expect(attempts).toEqual(attempts.map((_, i) => i));
  });
});
