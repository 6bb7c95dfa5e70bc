import { setTimeout as sleep } from 'node:timers/promises';
import { SIGNATURE_CLOCK_SKEW_SECONDS, SIGNATURE_TOLERANCE_SECONDS, signWebhook } from '../../src/crypto/webhook-signature';
import { admitRequest } from '../../src/domain/accounts/rate-limits';
import { awayFromMinuteEdge } from '../helpers/processes';
import { createTenant, envelope, type JsonResponse, request, sendInbound, startStack, type Tenant, type TestStack } from '../helpers/stack';

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
