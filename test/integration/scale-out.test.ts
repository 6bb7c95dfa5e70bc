import { hostname } from 'node:os';
import { type ScheduleDescription, type ScheduleHandle, ScheduleNotFoundError } from '@temporalio/client';
import { deliveryIdFor } from '../../src/delivery/outbox/fan-out';
import { projectCreationWorkflowId } from '../../src/domain/work/project-creation';
import { temporalScheduleId } from '../../src/domain/reporting/report-schedules';
import { retentionScheduleId } from '../../src/temporal/retention-schedule';
import { deliveryWorkflowId } from '../../workflows/webhook-delivery.contract';
import { projectData } from '../helpers/fixtures';
import { type ReceivedRequest, startReceiver, testCertificate, type TestReceiver } from '../helpers/https-receiver';
import { awayFromMinuteEdge, type SpawnedProcess, spawnStartScript, stopProcess, waitFor, workerStarted } from '../helpers/processes';
import { createTenant, envelope, type JsonResponse, processEnvOf, request, sendInbound, startStack, type Tenant, type TestStack } from '../helpers/stack';
import { addApiKey, registerEndpoint, type RegisteredEndpoint, verifiedAsReceiver } from '../helpers/webhooks';

/** Attempts in flight to one endpoint, all workers together (WEBHOOK_ENDPOINT_MAX_IN_FLIGHT). */
const MAX_IN_FLIGHT = 2;
/** Deliveries failing a retry, with no success between, that open an endpoint's breaker (WEBHOOK_CIRCUIT_FAILURES). */
const BREAKER_FAILURES = 3;

interface Api {
  process: SpawnedProcess;
  baseUrl: string;
}

/**
 * A schedule's description, asked again while the server refuses for a moment: the server answers it with a query to
 * its scheduler workflow, which a busy dev server can fail while the schedule fires (CI saw that once).
 */
async function describeSchedule(handle: ScheduleHandle): Promise<ScheduleDescription> {
  let refusal: unknown;
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      return await handle.describe();
    } catch (error) {
      if (error instanceof ScheduleNotFoundError) throw error;
      refusal = error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  throw refusal;
}

/**
 * Replicas, as a team that outgrows one machine runs them: two api and two worker processes started from the built
 * dist/ by package.json's start scripts (as the Docker image runs them), on one PostgreSQL database and one Temporal
 * server, sharing nothing but those. One api and one worker are killed with SIGKILL under load and replaced. The
 * in-process stack here only registers endpoints and reads; it runs no worker and no dispatcher. The workers load the
 * workflow bundle global setup made (WORKFLOW_BUNDLE_PATH, a production setting too) instead of each bundling dist/workflows.
 */
describe('scale-out: two api and two worker processes on one PostgreSQL and one Temporal', () => {
  let stack: TestStack;
  let env: Record<string, string>;
  const apis: Api[] = [];
  const workers: SpawnedProcess[] = [];
  const everyProcess: SpawnedProcess[] = [];
  const receivers: TestReceiver[] = [];

  async function startApi(): Promise<Api> {
    const child = spawnStartScript('start:api', env);
    everyProcess.push(child);
    const port = await waitFor(async () => /"port":(\d+)/.exec(child.output())?.[1] ?? (child.exitCode !== null && 'exited'), 150_000, 'an api to listen');
    if (port === 'exited') throw new Error(`An api exited (${child.exitCode}) before it listened:\n${child.output().slice(-2000)}`);
    return { process: child, baseUrl: `http://127.0.0.1:${port}` };
  }

  async function startWorker(): Promise<SpawnedProcess> {
    const child = spawnStartScript('start:worker', env);
    everyProcess.push(child);
    await workerStarted(child, 'replica');
    return child;
  }

  async function receiver(): Promise<TestReceiver> {
    const started = await startReceiver();
    receivers.push(started);
    return started;
  }

  /** A company whose `sender` key makes the changes and whose endpoint (owned by another key, so echo prevention keeps nothing back) gets every event. */
  async function subscribedCompany(hook: TestReceiver): Promise<{ sender: Tenant; owner: Tenant; endpoint: RegisteredEndpoint }> {
    const sender = await createTenant(stack.orm, ['admin']);
    const owner = await addApiKey(stack, sender);
    return { sender, owner, endpoint: await registerEndpoint(stack, owner.key, { url: hook.url, event_types: ['*'] }) };
  }

  /**
   * Worker identities (`pid@host`, Temporal's default) of the processes that ran a delivery's attempts, from its history:
   * an attempt activity's worker, or, for an attempt made in a workflow task (a local activity, recorded as a marker),
   * the worker that ran that task.
   */
  async function attemptIdentities(deliveryId: string): Promise<string[]> {
    const history = await stack.temporal.workflow.getHandle(deliveryWorkflowId(deliveryId)).fetchHistory();
    const identities: string[] = [];
    let taskWorker: string | null = null;
    for (const event of history.events ?? []) {
      if (event.workflowTaskStartedEventAttributes) taskWorker = event.workflowTaskStartedEventAttributes.identity ?? null;
      if (event.activityTaskStartedEventAttributes?.identity) identities.push(event.activityTaskStartedEventAttributes.identity);
      if (event.markerRecordedEventAttributes?.markerName === 'core_local_activity' && taskWorker) identities.push(taskWorker);
    }
    return identities;
  }

  const identityOf = (child: SpawnedProcess) => `${child.pid}@${hostname()}`;

  beforeAll(async () => {
    stack = await startStack({ worker: false, dispatcher: false });
    env = {
      ...processEnvOf(stack),
      PORT: '0',
      HOST: '127.0.0.1',
      NODE_EXTRA_CA_CERTS: testCertificate().certFile,
      WEBHOOK_ALLOW_LOOPBACK: 'true',
      WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2,0.2,0.2',
      WEBHOOK_TIMEOUT_MS: '5000',
      WEBHOOK_ENDPOINT_MAX_IN_FLIGHT: String(MAX_IN_FLIGHT),
      WEBHOOK_CIRCUIT_FAILURES: String(BREAKER_FAILURES),
      // No probe while the test looks: an opened breaker stays open.
      WEBHOOK_CIRCUIT_COOLDOWN: '600',
      OUTBOX_POLL_MS: '250',
      RETENTION_EVERY_MINUTES: '1',
    };
    apis.push(...(await Promise.all([startApi(), startApi()])));
    workers.push(...(await Promise.all([startWorker(), startWorker()])));
  }, 400_000);

  afterAll(async () => {
    await Promise.all(everyProcess.map((child) => stopProcess(child)));
    await Promise.all(receivers.map((r) => r.close()));
    await stack?.close();
  }, 60_000);

  it('delivers every committed change once per X-Webhook-ID and completes every operation once, with an api and a worker killed and replaced under load', async () => {
    const hook = await receiver();
    const { sender, endpoint } = await subscribedCompany(hook);
    // REST writes from a key of their own: the inbound and REST budgets per key stay far from the load.
    const restWriter = await addApiKey(stack, sender);
    const scheduled = await request(apis[0]!.baseUrl, 'POST', '/api/v1/report-schedules', {
      key: restWriter.key,
      body: { name: 'Every minute', report_type: 'open_work_orders_by_project', cron: '* * * * *' },
    });
    expect(scheduled.status).toBe(201);

    const acknowledgedEvents: string[] = [];
    const projects = new Map<string, 'accepted' | 'unknown'>();
    const unexpected: string[] = [];
    /** A request's outcome: its response, or `null` when its api died under it (committed or not: the database says). */
    const send = async (what: string, call: () => Promise<JsonResponse>): Promise<JsonResponse | null> => {
      try {
        const response = await call();
        if (response.status >= 300) unexpected.push(`${what}: ${response.status} ${JSON.stringify(response.body)}`);
        else if (response.body?.event_id) acknowledgedEvents.push(response.body.event_id);
        return response;
      } catch {
        return null;
      }
    };

    const live = [...apis];
    const TICKS = 36;
    let killedAt = 0;
    let replacing: Promise<void> = Promise.resolve();
    const inFlight: Promise<unknown>[] = [];
    for (let tick = 0; tick < TICKS; tick++) {
      const inbound = live[tick % live.length]!;
      const rest = live[(tick + 1) % live.length]!;
      inFlight.push(
        send('inbound employee.created', () =>
          sendInbound(inbound.baseUrl, sender, envelope('employee.created', { emp_number: `SCALE-${tick}`, name: `Scale ${tick}`, email: 's@example.com', employee_type: 'office' })),
        ),
        send('REST customer', () => request(rest.baseUrl, 'POST', '/api/v1/customers', { key: restWriter.key, body: { name: `Scale customer ${tick}` } })),
      );
      if (tick % 6 === 0) {
        const code = `SCALE-P${tick}`;
        inFlight.push(send('inbound project.created', () => sendInbound(inbound.baseUrl, sender, envelope('project.created', projectData(code)))).then((r) => projects.set(code, r ? 'accepted' : 'unknown')));
      }
      if (tick === 12) {
        // While this tick's requests, and the deliveries and operations before them, are under way.
        await new Promise((resolve) => setTimeout(resolve, 5));
        killedAt = Date.now();
        await Promise.all([stopProcess(apis[0]!.process, 'SIGKILL'), stopProcess(workers[0]!, 'SIGKILL')]);
        live.splice(live.indexOf(apis[0]!), 1);
        replacing = Promise.all([
          startApi().then((api) => {
            apis.push(api);
            live.push(api);
          }),
          startWorker().then((worker) => void workers.push(worker)),
        ]).then(() => undefined);
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await Promise.all(inFlight);
    await replacing;
    expect(unexpected).toEqual([]);

    // Every operation accepted completes, once: one project per code, one run of its workflow, completed.
    const projectsOf = async (code: string) =>
      Number((await stack.em().execute<{ n: string }[]>('select count(*) as n from projects where company_id = ? and project_code = ?', [sender.companyId, code]))[0]!.n);
    for (const [code, outcome] of projects) {
      if (outcome === 'accepted') await waitFor(async () => (await projectsOf(code)) === 1, 60_000, `project ${code}`);
      const runs: string[] = [];
      for await (const run of stack.temporal.workflow.list({ query: `WorkflowId = "${projectCreationWorkflowId(sender.companyId, code)}"` })) runs.push(run.status.name);
      expect({ code, projects: await projectsOf(code), runs }).toEqual({ code, projects: outcome === 'accepted' || runs.length ? 1 : 0, runs: outcome === 'accepted' || runs.length ? ['COMPLETED'] : [] });
    }
    expect([...projects.values()].filter((o) => o === 'accepted').length).toBeGreaterThan(0);

    // Every committed change (the database decides, whichever api took it) is dispatched once and delivered.
    const events = async () => stack.em().execute<{ id: string; dispatched_at: Date | null }[]>('select id, dispatched_at from outbox_events where company_id = ?', [sender.companyId]);
    await waitFor(async () => (await events()).every((e) => e.dispatched_at), 120_000, 'every event dispatched');
    const eventIds = (await events()).map((e) => e.id);
    expect(eventIds).toEqual(expect.arrayContaining(acknowledgedEvents));
    const expected = eventIds.map((id) => deliveryIdFor(id, endpoint.id)).sort();
    const deliveries = async () => stack.em().execute<{ id: string; status: string }[]>('select id, status from webhook_deliveries where endpoint_id = ? order by id', [endpoint.id]);
    await waitFor(async () => (await deliveries()).every((d) => d.status === 'delivered') && (await deliveries()).length === expected.length, 180_000, 'every delivery delivered');
    expect((await deliveries()).map((d) => d.id)).toEqual(expected);

    // The receiver got each X-Webhook-ID, signed. An ID twice is an attempt whose worker was killed after sending it and
    // before recording it: sent before the kill, re-sent by the other worker after.
    const receipts = new Map<string, ReceivedRequest[]>();
    for (const received of hook.requests) receipts.set(String(received.headers['x-webhook-id']), [...(receipts.get(String(received.headers['x-webhook-id'])) ?? []), received]);
    expect([...receipts.keys()].sort()).toEqual(expected);
    expect(hook.requests.every((received) => verifiedAsReceiver(endpoint.secret, received))).toBe(true);
    const resent = [...receipts.values()].filter((r) => r.length > 1);
    for (const copies of resent) {
      expect(copies).toHaveLength(2);
      expect(copies[0]!.receivedAt).toBeLessThanOrEqual(killedAt);
      expect(copies[1]!.receivedAt).toBeGreaterThan(killedAt);
    }
    expect(resent.length).toBeLessThanOrEqual(MAX_IN_FLIGHT);

    // One workflow run per delivery (the dispatchers of three workers started each once), and attempts made by more than one worker.
    const runsPerDelivery = new Map<string, number>();
    await waitFor(
      async () => {
        runsPerDelivery.clear();
        for await (const run of stack.temporal.workflow.list({ query: `EndpointId = "${endpoint.id}"` })) runsPerDelivery.set(run.workflowId, (runsPerDelivery.get(run.workflowId) ?? 0) + 1);
        return [...runsPerDelivery.values()].reduce((a, b) => a + b, 0) >= expected.length;
      },
      30_000,
      'every delivery run visible',
    );
    expect([...runsPerDelivery.keys()].sort()).toEqual(expected.map(deliveryWorkflowId).sort());
    expect([...runsPerDelivery.values()].every((n) => n === 1)).toBe(true);
    const identities = new Set((await Promise.all(expected.map(attemptIdentities))).flat());
    expect(identities.size).toBeGreaterThanOrEqual(2);

    // The schedules run once per firing, not once per replica: each worker made sure of the retention schedule at its
    // start, and one api made the report schedule. Wait for the report schedule's first firing (cron: every minute).
    const reportSchedule = stack.temporal.schedule.getHandle(temporalScheduleId(scheduled.body.id));
    const fired = await waitFor(async () => {
      const actions = (await describeSchedule(reportSchedule)).info.recentActions;
      return actions.length > 0 && actions;
    }, 75_000, 'the report schedule to fire');
    const reportRuns = async () => (await stack.em().execute<{ workflow_id: string }[]>('select workflow_id from report_runs where schedule_id = ?', [scheduled.body.id])).map((r) => r.workflow_id);
    await waitFor(async () => (await reportRuns()).length >= fired.length, 30_000, 'the report runs');
    // One run per firing: never more runs than firings counted after them, each of its own workflow.
    const reports = await reportRuns();
    expect(new Set(reports).size).toBe(reports.length);
    expect(reports.length).toBeLessThanOrEqual((await describeSchedule(reportSchedule)).info.recentActions.length);

    const retentionIds: string[] = [];
    for await (const schedule of stack.temporal.schedule.list()) if (schedule.scheduleId.startsWith('retention/')) retentionIds.push(schedule.scheduleId);
    const retentionId = retentionScheduleId(stack.config.temporal.taskQueues);
    expect(retentionIds.filter((id) => id === retentionId)).toHaveLength(1);
    const retention = stack.temporal.schedule.getHandle(retentionId);
    const retentionFired = await waitFor(async () => (await describeSchedule(retention)).info.numActionsTaken, 75_000, 'the retention schedule to fire');
    const retentionRuns = async () => {
      const ids: string[] = [];
      for await (const run of stack.temporal.workflow.list({ query: `TemporalScheduledById = "${retentionId}"` })) ids.push(run.workflowId);
      return ids;
    };
    await waitFor(async () => (await retentionRuns()).length >= retentionFired, 30_000, 'the retention runs');
    const runs = await retentionRuns();
    expect(new Set(runs).size).toBe(runs.length);
    expect(runs.length).toBeLessThanOrEqual((await describeSchedule(retention)).info.numActionsTaken);
  }, 600_000);

  it("counts one key's rate limit once across the apis: the 61st REST request in a minute is a 429 whichever api serves it", async () => {
    const [first, second] = apis.filter((api) => api.process.exitCode === null && api.process.signalCode === null);
    const reader = await createTenant(stack.orm, ['projects:read']);
    await awayFromMinuteEdge();
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await request((i % 2 ? second! : first!).baseUrl, 'GET', '/api/v1/projects', { key: reader.key })).status);
    expect(statuses).toEqual(Array(60).fill(200));
    for (const api of [first!, second!]) {
      const refused = await request(api.baseUrl, 'GET', '/api/v1/projects', { key: reader.key });
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('RATE_LIMITED');
    }
  }, 120_000);

  it('holds one endpoint to its attempts in flight across the two workers', async () => {
    const hook = await receiver();
    hook.respondWith(() => ({ status: 200, delayMs: 300 }));
    const { sender, endpoint } = await subscribedCompany(hook);
    const live = apis.filter((api) => api.process.exitCode === null && api.process.signalCode === null);
    const sent = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        sendInbound(live[i % live.length]!.baseUrl, sender, envelope('employee.created', { emp_number: `CAP-${i}`, name: `Cap ${i}`, email: 'c@example.com', employee_type: 'office' })),
      ),
    );
    expect(sent.map((r) => r.status)).toEqual(Array(12).fill(200));
    await hook.waitForRequests(12, 60_000);
    await waitFor(async () => hook.requests.every((r) => r.answeredAt), 10_000, 'every reply');

    // The most requests the endpoint had open at once, from when each arrived to when it was answered.
    const edges = hook.requests.flatMap((r) => [
      { at: r.receivedAt, step: 1 },
      { at: r.answeredAt!, step: -1 },
    ]);
    edges.sort((a, b) => a.at - b.at || a.step - b.step);
    let open = 0;
    let most = 0;
    for (const edge of edges) most = Math.max(most, (open += edge.step));
    expect(most).toBe(MAX_IN_FLIGHT);

    const deliveryIds = sent.map((r) => deliveryIdFor(r.body.event_id, endpoint.id));
    const identities = new Set((await Promise.all(deliveryIds.map(attemptIdentities))).flat());
    expect([...identities].sort()).toEqual(workers.filter((w) => w.exitCode === null && w.signalCode === null).map(identityOf).sort());
  }, 120_000);

  it("opens one endpoint's breaker from failures counted across the two workers, and then sends nothing", async () => {
    const hook = await receiver();
    hook.respondWith(() => ({ status: 500 }));
    const { sender, owner, endpoint } = await subscribedCompany(hook);
    const live = apis.filter((api) => api.process.exitCode === null && api.process.signalCode === null);
    const sent = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        sendInbound(live[i % live.length]!.baseUrl, sender, envelope('employee.created', { emp_number: `BRK-${i}`, name: `Breaker ${i}`, email: 'b@example.com', employee_type: 'office' })),
      ),
    );
    expect(sent.map((r) => r.status)).toEqual(Array(8).fill(200));

    const breaker = await waitFor(
      async () => {
        const { body } = await request(live[0]!.baseUrl, 'GET', `/api/v1/webhook-endpoints/${endpoint.id}`, { key: owner.key });
        return body.circuit_breaker?.state === 'open' && body.circuit_breaker;
      },
      60_000,
      'the breaker to open',
    );
    // Attempts under way when it opened may still arrive; none is begun after, though the held deliveries' retries
    // were due every 0.2 s, whichever worker runs them.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const settled = hook.requests.length;
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(hook.requests.length).toBe(settled);
    expect(hook.requests.filter((r) => r.receivedAt > Date.parse(breaker.opened_at) + 1_000)).toEqual([]);

    // The endpoint's runs (the eight but those deferred behind its cap of open runs) were attempted, and the breaker
    // counted their failures in PostgreSQL, which both workers read. Which worker attempts a run is the dispatchers'
    // race for the claim (a run starts eagerly in its dispatcher's worker, its retries there too), so one worker may
    // have made them all: what both must do, send nothing once it is open, is checked above.
    const deliveries = () =>
      stack.em().execute<{ id: string; status: string; held_reason: string | null; deferred: boolean }[]>(
        'select id, status, held_reason, deferred_since is not null as deferred from webhook_deliveries where endpoint_id = ?',
        [endpoint.id],
      );
    const withRuns = (await deliveries()).filter((d) => !d.deferred).map((d) => d.id);
    expect(withRuns.length).toBeGreaterThanOrEqual(BREAKER_FAILURES);
    const identities = new Set((await Promise.all(withRuns.map(attemptIdentities))).flat());
    expect(identities.size).toBeGreaterThan(0);
    expect([...identities].filter((identity) => !workers.map(identityOf).includes(identity))).toEqual([]);
    // Each of the eight waits for the breaker's probe (its run held, or deferred without one), none delivered or failed.
    await waitFor(async () => (await deliveries()).every((d) => d.held_reason === 'circuit_open' || d.deferred), 30_000, 'every delivery held by the breaker or deferred');
    const statuses = (await deliveries()).map((d) => d.status);
    expect(statuses).toHaveLength(8);
    expect(statuses.filter((status) => status !== 'pending' && status !== 'retrying')).toEqual([]);
  }, 120_000);
});
