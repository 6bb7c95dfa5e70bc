import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SIGNATURE_CLOCK_SKEW_SECONDS, SIGNATURE_TOLERANCE_SECONDS, signWebhook } from '../../src/crypto/webhook-signature';
import { admitRequest } from '../../src/domain/accounts/rate-limits';
import { type DevServer, startTemporalDevServer } from '../../src/temporal/dev-server';
import { installTemporalRuntime } from '../../src/temporal/runtime';
import { projectCounts, projectData } from '../helpers/fixtures';
import { freePort } from '../helpers/ports';
import { awayFromMinuteEdge } from '../helpers/processes';
import { createTenant, envelope, type JsonResponse, request, sendInbound, startStack, type Tenant, testConfig, type TestStack } from '../helpers/stack';

/**
 * One inbound request, signed once and sent as often as a test likes: the very same bytes and headers, as generic
 * senders (integration platforms' HTTP steps, queue-based retriers) resend a request.
 */
function signedRequest(stack: TestStack, tenant: Tenant, body: object, timestamp = Math.floor(Date.now() / 1000)) {
  const raw = JSON.stringify(body);
  const signature = signWebhook(tenant.signingSecret, timestamp, raw);
  const headers = { 'Content-Type': 'application/json', 'X-Webhook-Timestamp': String(timestamp), 'X-Webhook-Signature': signature };
  return { signature, send: () => request(stack.baseUrl, 'POST', '/webhooks/inbound', { key: tenant.key, rawBody: raw, headers }) };
}

async function customersNamed(stack: TestStack, name: string): Promise<number> {
  const [row] = await stack.em().execute<{ n: number }[]>('select count(*)::int as n from customers where name = ?', [name]);
  return row!.n;
}

function expectReplayed(response: JsonResponse): void {
  expect(response.status).toBe(409);
  expect(response.body.error).toMatchObject({ code: 'REPLAYED_REQUEST', details: { field: 'X-Webhook-Signature', reason: 'already used' } });
}

/** Issue 44: a signature is spent only by a request that was processed; refused ones may be sent again as they are. */
describe('inbound retries', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack({ worker: false });
  });
  afterAll(() => stack.close());

  it('runs the same bytes once when they are sent again after a 429, following its Retry-After', async () => {
    await awayFromMinuteEdge();
    const tenant = await createTenant(stack.orm, ['webhooks:inbound']);
    for (let i = 0; i < 50; i++) expect((await sendInbound(stack.baseUrl, tenant, envelope('test.connection', { i }))).status).toBe(200);
    const { send } = signedRequest(stack, tenant, envelope('customer.created', { name: 'Retried After 429 Ltd' }));
    const refused = await send();
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('RATE_LIMITED');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);

    await sleep(retryAfter * 1000);
    const again = await send();
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ success: true, record_id: expect.any(String) });
    expect(await customersNamed(stack, 'Retried After 429 Ltd')).toBe(1);
    // Now processed: the same bytes are a replay.
    expectReplayed(await send());
  }, 120_000);

  it("answers 100 copies of a processed request with 409s, then 429s, leaving the key's own budget alone", async () => {
    await awayFromMinuteEdge();
    const tenant = await createTenant(stack.orm, ['webhooks:inbound']);
    const { send } = signedRequest(stack, tenant, envelope('customer.created', { name: 'Copied Many Times Ltd' }));
    expect((await send()).status).toBe(200);
    const copies: JsonResponse[] = [];
    for (let i = 0; i < 100; i++) copies.push(await send());
    // Copies are counted with the requests whose signature fails: 20 a minute.
    expect(copies.map((c) => c.status)).toEqual([...Array<number>(20).fill(409), ...Array<number>(80).fill(429)]);
    expectReplayed(copies[19]!);
    expect(copies[20]!.body.error).toMatchObject({ code: 'RATE_LIMITED', details: { field: 'X-API-Key' } });
    expect(Number(copies[99]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The key's own requests: the first and this one counted, none of the copies.
    const next = await sendInbound(stack.baseUrl, tenant, envelope('test.connection'));
    expect(next.status).toBe(200);
    expect(next.headers.get('ratelimit')).toMatch(/^"burst";r=48;t=\d+, "hour";r=998;t=\d+$/);
  });

  it('runs one of two copies sent at the same moment', async () => {
    const tenant = await createTenant(stack.orm, ['webhooks:inbound']);
    const { send } = signedRequest(stack, tenant, envelope('customer.created', { name: 'Sent Twice At Once Ltd' }));
    const responses = await Promise.all([send(), send()]);
    expect(responses.map((r) => r.status).sort()).toEqual([200, 409]);
    expectReplayed(responses.find((r) => r.status === 409)!);
  });

  it('spends the signature of a request refused for its content: the same bytes again are a replay', async () => {
    const tenant = await createTenant(stack.orm, ['webhooks:inbound']);
    const { send } = signedRequest(stack, tenant, envelope('customer.created', { name: '' }));
    const refused = await send();
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'data.name' } });
    expectReplayed(await send());
  });

  it('keeps the record of a timestamp at the future edge until no api host within the clock skew allowance accepts it', async () => {
    const tenant = await createTenant(stack.orm, ['webhooks:inbound']);
    const timestamp = Math.floor(Date.now() / 1000) + SIGNATURE_TOLERANCE_SECONDS;
    const { send, signature } = signedRequest(stack, tenant, envelope('test.connection', { edge: 'future' }), timestamp);
    expect((await send()).status).toBe(200);
    expectReplayed(await send());
    const [record] = await stack
      .em()
      .execute<{ expires: number }[]>('select extract(epoch from expires_at)::float8 as expires from inbound_signatures where api_key_id = ? and signature = ?', [
        tenant.apiKeyId,
        signature,
      ]);
    // Timestamps are compared in whole seconds: this host accepts it until timestamp + tolerance + 1; a host whose clock
    // is behind ours by the allowance, that much longer.
    const lastAccepted = timestamp + SIGNATURE_TOLERANCE_SECONDS + 1 + SIGNATURE_CLOCK_SKEW_SECONDS;
    expect(record!.expires).toBeGreaterThanOrEqual(lastAccepted);
    expect(record!.expires).toBeLessThan(lastAccepted + 5);
  });

  it('keeps each record until its own expiry, whatever later requests of the key ask for theirs', async () => {
    const tenant = await createTenant(stack.orm, ['webhooks:inbound']);
    const admit = async (signature: string, ttlSeconds: number) =>
      (await admitRequest(stack.em(), tenant.apiKeyId, 'inbound', { value: signature, ttlSeconds, idempotencyKey: null })).outcome;
    expect(await admit('signed-far-ahead', 600)).toBe('counted');
    expect(await admit('signed-long-ago', 1)).toBe('counted');
    await sleep(2_100);
    // Each admission prunes the key's expired records: the short-lived one, not the other.
    expect(await admit('signed-now', 1)).toBe('counted');
    expect(await admit('signed-far-ahead', 1)).toBe('replayed');
    expect(await admit('signed-long-ago', 1)).toBe('counted');
  });
});

/** A 503 while Temporal is away, on a Temporal server of this file's own (the shared one keeps serving the others). */
describe('inbound retries after Temporal was away', () => {
  let dir: string;
  let temporalPort: number;
  let temporal: DevServer;
  let stack: TestStack;

  const startTemporal = () => startTemporalDevServer({ dbFilename: path.join(dir, 'temporal.db'), port: temporalPort, namespace: 'default' });

  beforeAll(async () => {
    // Before the dev server: starting it would create the SDK runtime with its defaults.
    installTemporalRuntime(process.env.LOG_LEVEL ?? 'silent');
    dir = mkdtempSync(path.join(os.tmpdir(), 'inbound-retries-'));
    temporalPort = await freePort();
    temporal = await startTemporal();
    stack = await startStack({ config: await testConfig({ TEMPORAL_ADDRESS: temporal.address }) });
  }, 120_000);

  afterAll(async () => {
    await stack?.close();
    await temporal?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs the same bytes once when they are sent again after 503s, once Temporal is back', async () => {
    const tenant = await createTenant(stack.orm, ['webhooks:inbound']);
    const { send } = signedRequest(stack, tenant, envelope('project.created', projectData('RETRY-503')));
    await temporal.stop();
    let answer = await send();
    expect(answer.status).toBe(503);
    expect(answer.body.error.code).toBe('SERVICE_UNAVAILABLE');
    temporal = await startTemporal();
    // As a generic sender does: the same request again after each Retry-After, while the answer is a 503 (the api
    // reconnects to Temporal within seconds of its return).
    for (let attempt = 0; answer.status === 503 && attempt < 12; attempt++) {
      await sleep(Number(answer.headers.get('retry-after')) * 1000);
      answer = await send();
    }
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ success: true, message: 'Project RETRY-503 created' });
    expect(await projectCounts(stack, tenant.companyId)).toEqual({ customers: 1, locations: 1, contacts: 2, projects: 1 });
    expectReplayed(await send());
  }, 180_000);
});
