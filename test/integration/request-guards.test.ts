import { signWebhook } from '../../src/crypto/webhook-signature';
import { countRows } from '../helpers/fixtures';
import { createTenant, envelope, request, startStack, type Tenant, type TestStack } from '../helpers/stack';

/** Replay protection of inbound requests and Idempotency-Key on REST and inbound writes. */
describe('request guards', () => {
  let stack: TestStack;
  let tenant: Tenant;

  beforeAll(async () => {
    stack = await startStack({ worker: false });
    tenant = await createTenant(stack.orm, ['admin']);
  });
  afterAll(() => stack.close());

  /** An inbound request signed once, to be sent as many times as a test likes. */
  function signedInbound(body: object, timestamp = Math.floor(Date.now() / 1000)) {
    const raw = JSON.stringify(body);
    const headers = {
      'Content-Type': 'application/json',
      'X-Webhook-Timestamp': String(timestamp),
      'X-Webhook-Signature': signWebhook(tenant.signingSecret, timestamp, raw),
    };
    return (extra: Record<string, string> = {}) => request(stack.baseUrl, 'POST', '/webhooks/inbound', { key: tenant.key, rawBody: raw, headers: { ...headers, ...extra } });
  }

  describe('inbound replay protection', () => {
    it('refuses a signed request sent a second time with 409, and takes it signed anew', async () => {
      const body = envelope('test.connection', { nonce: 'replay' });
      const signedAt = Math.floor(Date.now() / 1000);
      const send = signedInbound(body, signedAt);
      expect((await send()).status).toBe(200);
      const replay = await send();
      expect(replay.status).toBe(409);
      expect(replay.body.error).toMatchObject({ code: 'REPLAYED_REQUEST', details: { field: 'X-Webhook-Signature', reason: 'already used' } });
      // Another timestamp makes another signature, whatever second it is now.
      const resigned = signedInbound(body, signedAt - 1);
      expect((await resigned()).status).toBe(200);
    });

    it('lets a request with an Idempotency-Key be resent as it is, answering it as the first time', async () => {
      const send = signedInbound(envelope('customer.created', { name: 'Replay Safe Ltd' }));
      const first = await send({ 'Idempotency-Key': 'customer-replay-safe' });
      expect(first.status).toBe(200);
      const again = await send({ 'Idempotency-Key': 'customer-replay-safe' });
      expect(again.status).toBe(200);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      const [row] = await stack.em().execute<{ n: number }[]>("select count(*)::int as n from customers where name = 'Replay Safe Ltd'");
      expect(row!.n).toBe(1);
    });

    it('refuses a captured request resent under another Idempotency-Key or none: the signature does not cover the key', async () => {
      const keyed = signedInbound(envelope('customer.created', { name: 'Captured Once Ltd' }));
      expect((await keyed({ 'Idempotency-Key': 'captured-1' })).status).toBe(200);
      for (const headers of [{ 'Idempotency-Key': 'captured-2' }, {}] as Record<string, string>[]) {
        const copy = await keyed(headers);
        expect(copy.status).toBe(409);
        expect(copy.body.error).toMatchObject({ code: 'REPLAYED_REQUEST', details: { field: 'X-Webhook-Signature' } });
      }
      const unkeyed = signedInbound(envelope('customer.created', { name: 'Captured Twice Ltd' }));
      expect((await unkeyed()).status).toBe(200);
      expect((await unkeyed({ 'Idempotency-Key': 'captured-3' })).status).toBe(409);
      const [row] = await stack.em().execute<{ n: number }[]>("select count(*)::int as n from customers where name in ('Captured Once Ltd', 'Captured Twice Ltd')");
      expect(row!.n).toBe(2);
    });

    it('runs a request that failed again when it is resent as it is with its Idempotency-Key', async () => {
      const send = signedInbound(envelope('customer.created', { name: '' }));
      const first = await send({ 'Idempotency-Key': 'failed-first' });
      expect(first.status).toBe(400);
      const again = await send({ 'Idempotency-Key': 'failed-first' });
      expect(again.status).toBe(400);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get('idempotent-replayed')).toBeNull();
    });

    it('answers 422 to an Idempotency-Key reused for another body', async () => {
      const first = await signedInbound(envelope('customer.created', { name: 'Key Owner Inc' }))({ 'Idempotency-Key': 'inbound-key-1' });
      expect(first.status).toBe(200);
      const other = await signedInbound(envelope('customer.created', { name: 'Someone Else Inc' }))({ 'Idempotency-Key': 'inbound-key-1' });
      expect(other.status).toBe(422);
      expect(other.body.error).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', details: { field: 'Idempotency-Key' } });
    });
  });

  describe('Idempotency-Key on REST writes', () => {
    it('creates once and answers the same key and body with the first response', async () => {
      const body = { name: 'Idempotent Builders' };
      const first = await request(stack.baseUrl, 'POST', '/api/v1/customers', { key: tenant.key, body, headers: { 'Idempotency-Key': 'create-idem-1' } });
      expect(first.status).toBe(201);
      const again = await request(stack.baseUrl, 'POST', '/api/v1/customers', { key: tenant.key, body, headers: { 'Idempotency-Key': 'create-idem-1' } });
      expect(again.status).toBe(201);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get('location')).toBe(first.headers.get('location'));
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      const without = await request(stack.baseUrl, 'POST', '/api/v1/customers', { key: tenant.key, body });
      expect(without.status).toBe(409);
    });

    it('answers 422 to the same key with another body, and keeps keys apart per API key', async () => {
      const first = await request(stack.baseUrl, 'POST', '/api/v1/customers', { key: tenant.key, body: { name: 'Keyed One' }, headers: { 'Idempotency-Key': 'k-2' } });
      expect(first.status).toBe(201);
      const other = await request(stack.baseUrl, 'POST', '/api/v1/customers', { key: tenant.key, body: { name: 'Keyed Two' }, headers: { 'Idempotency-Key': 'k-2' } });
      expect(other.status).toBe(422);
      expect(other.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
      const stranger = await createTenant(stack.orm, ['customers:write']);
      const theirs = await request(stack.baseUrl, 'POST', '/api/v1/customers', { key: stranger.key, body: { name: 'Keyed Two' }, headers: { 'Idempotency-Key': 'k-2' } });
      expect(theirs.status).toBe(201);
    });

    it('gives the key back when the request fails, so a corrected retry runs', async () => {
      const bad = await request(stack.baseUrl, 'POST', '/api/v1/customers', { key: tenant.key, body: { name: '' }, headers: { 'Idempotency-Key': 'k-3' } });
      expect(bad.status).toBe(400);
      const good = await request(stack.baseUrl, 'POST', '/api/v1/customers', { key: tenant.key, body: { name: 'Fixed Name Co' }, headers: { 'Idempotency-Key': 'k-3' } });
      expect(good.status).toBe(201);
    });

    it('runs two concurrent requests with one key once', async () => {
      const before = await countRows(stack, 'customers', tenant.companyId);
      const send = () => request(stack.baseUrl, 'POST', '/api/v1/customers', { key: tenant.key, body: { name: 'Racing Crane Hire' }, headers: { 'Idempotency-Key': 'k-race' } });
      const results = await Promise.all([send(), send()]);
      expect(results.map((r) => r.status).sort()).toEqual(expect.arrayContaining([201]));
      for (const r of results) expect([201, 409]).toContain(r.status);
      const inUse = results.find((r) => r.status === 409);
      if (inUse) expect(inUse.body.error.code).toBe('IDEMPOTENCY_KEY_IN_USE');
      else expect(results[0]!.body).toEqual(results[1]!.body);
      expect(await countRows(stack, 'customers', tenant.companyId)).toBe(before + 1);
    });

    it('refuses a key that is not 1 to 255 visible ASCII characters', async () => {
      for (const key of ['has space', 'x'.repeat(256)]) {
        const response = await request(stack.baseUrl, 'POST', '/api/v1/customers', { key: tenant.key, body: { name: 'Never Made' }, headers: { 'Idempotency-Key': key } });
        expect(response.status).toBe(400);
        expect(response.body.error.details.field).toBe('Idempotency-Key');
      }
    });
  });
});
