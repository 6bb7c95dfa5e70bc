import { spawn } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/paths';
import { startReceiver, type TestReceiver } from '../helpers/https-receiver';
import { waitFor } from '../helpers/processes';
import { createTenant, envelope, issueTestKey, request, sendInbound, startStack, taskQueueEnvOf, testConfig, type TestStack } from '../helpers/stack';
import { addApiKey, deliveryIdsOf, registerEndpoint, type RegisteredEndpoint } from '../helpers/webhooks';

let employeeSeq = 0;
const employee = () => envelope('employee.created', { emp_number: `REC-${++employeeSeq}`, name: 'Dana Builder', email: 'dana@example.com', employee_type: 'site_worker' });

/** Bulk recovery: every failed delivery of an endpoint since a time, re-run through REST or the operator CLI. */
describe('recovering the failed deliveries of an endpoint', () => {
  let stack: TestStack;
  const receivers: TestReceiver[] = [];

  beforeAll(async () => {
    stack = await startStack({ config: await testConfig({ WEBHOOK_TIMEOUT_MS: '1500' }) });
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await stack.close();
  });

  /** A company whose endpoint refused `count` deliveries (a 400 fails a delivery at its first attempt). */
  async function failedDeliveries(count: number) {
    const owner = await createTenant(stack.orm, ['admin']);
    const subscriber = await addApiKey(stack, owner);
    // Inbound allows bursts of 50 a minute per key: the changes come from several keys.
    const senders = await Promise.all(Array.from({ length: Math.ceil(count / 40) }, () => issueTestKey(stack.orm, owner.companyId, ['admin'])));
    const hook = await startReceiver();
    receivers.push(hook);
    hook.respondWith(() => ({ status: 400, body: '{"error":"schema mismatch"}' }));
    const endpoint = await registerEndpoint(stack, subscriber.key, { url: hook.url, event_types: ['employee.created'] });
    const send = async (n: number) => {
      for (let i = 0; i < n; i++) expect((await sendInbound(stack.baseUrl, senders[i % senders.length]!, employee())).status).toBe(200);
    };
    return { subscriber, hook, endpoint, send };
  }

  async function allFailed(endpoint: RegisteredEndpoint, count: number): Promise<string[]> {
    return waitFor(
      async () => {
        const rows = await stack.em().execute<{ id: string }[]>(`select id from webhook_deliveries where endpoint_id = ? and status = 'failed'`, [endpoint.id]);
        return rows.length === count && rows.map((r) => r.id);
      },
      60_000,
      `${count} failed deliveries`,
    );
  }

  it('re-runs 50 failed deliveries through POST …/recover, with progress, keeping each X-Webhook-ID', async () => {
    const { subscriber, hook, endpoint, send } = await failedDeliveries(52);
    await send(2);
    const older = await allFailed(endpoint, 2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const since = new Date().toISOString();
    await send(50);
    const failed = (await allFailed(endpoint, 52)).filter((id) => !older.includes(id));
    expect(failed).toHaveLength(50);
    hook.respondWith(() => ({ status: 200 }));

    const started = Date.now();
    const recover = await request(stack.baseUrl, 'POST', `/api/v1/webhook-endpoints/${endpoint.id}/recover`, { key: subscriber.key, body: { since } });
    expect(recover.status).toBe(202);
    expect(recover.body).toMatchObject({ endpoint_id: endpoint.id, since, total: 50, outcomes: expect.any(Object) });
    const location = recover.headers.get('location')!;
    expect(location).toBe(`/api/v1/webhook-endpoints/${endpoint.id}/recoveries/${recover.body.id}`);

    const finishedSeen: number[] = [];
    const done = await waitFor(
      async () => {
        const { body } = await request(stack.baseUrl, 'GET', location, { key: subscriber.key });
        if (finishedSeen.at(-1) !== body.finished) finishedSeen.push(body.finished);
        return body.status === 'completed' && body.finished === body.total && body;
      },
      120_000,
      'the recovery to finish',
    );
    console.log(
      `Bulk recovery of ${done.total} failed deliveries: ${done.requested} re-runs requested, ${done.outcomes.delivered} delivered, ` +
        `${done.outcomes.failed} failed, in ${Date.now() - started} ms (finished as polled: ${finishedSeen.join(' → ')})`,
    );
    expect(done).toMatchObject({ total: 50, requested: 50, finished: 50, completed_at: expect.any(String) });
    expect(done.outcomes).toEqual({ pending: 0, retrying: 0, delivered: 50, failed: 0, cancelled: 0 });

    // Each of the 50 was sent once more with its own X-Webhook-ID, numbered after its first attempt; the two older ones not.
    const rerun = hook.requests.filter((r) => r.headers['x-webhook-retry'] === '1').map((r) => String(r.headers['x-webhook-id']));
    expect(rerun.sort()).toEqual([...failed].sort());
    const [olderRow] = await stack.em().execute<{ count: string }[]>(`select count(*) from webhook_deliveries where id = any(?::uuid[]) and status = 'failed'`, [`{${older.join(',')}}`]);
    expect(Number(olderRow!.count)).toBe(2);
    const alerts = await request(stack.baseUrl, 'GET', '/api/v1/webhook-alerts?status=open&limit=100', { key: subscriber.key });
    expect(alerts.body.data.map((a: any) => a.delivery_id).sort()).toEqual([...older].sort());
  }, 180_000);

  it('refuses a recovery with a bad body, of an unknown endpoint, or of a disabled one', async () => {
    const { subscriber, endpoint } = await failedDeliveries(0);
    const recover = (id: string, body: unknown) => request(stack.baseUrl, 'POST', `/api/v1/webhook-endpoints/${id}/recover`, { key: subscriber.key, body });
    const missing = await recover(endpoint.id, {});
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'since' } });
    expect((await recover(endpoint.id, { since: 'yesterday' })).body.error.details.field).toBe('since');
    expect((await recover('01a20000-0000-7000-8000-000000000000', { since: new Date().toISOString() })).status).toBe(404);
    await request(stack.baseUrl, 'PUT', `/api/v1/webhook-endpoints/${endpoint.id}`, { key: subscriber.key, body: { status: 'disabled' } });
    const disabled = await recover(endpoint.id, { since: new Date().toISOString() });
    expect(disabled.status).toBe(409);
    expect(disabled.body.error.details).toEqual({ field: 'status', reason: 'is disabled' });
    expect((await request(stack.baseUrl, 'GET', `/api/v1/webhook-endpoints/${endpoint.id}/recoveries/not-an-id`, { key: subscriber.key })).status).toBe(404);
  });

  it('re-runs them from the operator CLI, with a progress bar', async () => {
    const { hook, endpoint, send } = await failedDeliveries(10);
    const since = new Date(Date.now() - 1000).toISOString();
    await send(10);
    await allFailed(endpoint, 10);
    hook.respondWith(() => ({ status: 200 }));

    const run = await cli('delivery', 'recover', '--endpoint', endpoint.id, '--since', since);
    console.log(`npm run cli -- delivery recover:\n${run.stdout}`);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Recovery [0-9a-f-]{36}: 10 failed or cancelled deliveries to https:\/\/localhost:\d+\/hook since /);
    expect(run.stdout).toContain('[##############################] 10/10 re-run · requested 10 · delivered 10 · failed 0 · cancelled 0');
    expect(run.stdout).toContain('Done: 10 delivered, 0 failed, 0 cancelled of 10');
    expect((await deliveryIdsOf(stack, endpoint.id)).length).toBe(10);
    expect(hook.requests.filter((r) => r.headers['x-webhook-retry'] === '1')).toHaveLength(10);

    const wrong = await cli('delivery', 'recover', '--endpoint', endpoint.id, '--since', 'last week');
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('--since must be an ISO 8601 time');
  }, 120_000);

  /** `npm run cli -- …` against this stack's database and Temporal, asynchronously (the worker runs in this process). */
  function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const env = {
        ...process.env,
        DATABASE_URL: stack.config.databaseUrl,
        TEMPORAL_ADDRESS: stack.config.temporal.address,
        ...taskQueueEnvOf(stack.config),
      };
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'src/cli/main.ts'), ...args], { cwd: PROJECT_ROOT, env });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('exit', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    });
  }
});
