import type { EntityManager } from '@mikro-orm/postgresql';
import { signWebhook } from '../../src/crypto/webhook-signature';
import { SecretBox } from '../../src/crypto/secret-box';
import { ApiKeyCache } from '../../src/domain/accounts/api-key-cache';
import { revokeApiKey } from '../../src/domain/accounts/api-keys-service';
import { createLogger } from '../../src/logger';
import { waitFor } from '../helpers/processes';
import { createTenant, envelope, request, startStack, testConfig, type TestStack } from '../helpers/stack';

/** API processes keep recently used keys in memory; revocation must still take effect from the next request, everywhere. */
describe('API key cache', () => {
  let first: TestStack;
  let second: TestStack;

  beforeAll(async () => {
    const config = await testConfig();
    [first, second] = await Promise.all([startStack({ worker: false, config }), startStack({ worker: false, config })]);
  });
  afterAll(async () => {
    await Promise.all([first.close(), second.close()]);
  });

  it('serves a key from memory after its first use, and forgets it when it is revoked', async () => {
    const tenant = await createTenant(first.orm, ['projects:read']);
    const cache = new ApiKeyCache({ databaseUrl: first.config.databaseUrl, secretBox: new SecretBox(first.config.encryptionKey), logger: createLogger('silent') });
    await cache.start();
    try {
      const em = () => first.em() as EntityManager;
      expect((await cache.authenticate(em(), tenant.key))?.fromMemory).toBe(false);
      expect((await cache.authenticate(em(), tenant.key))?.fromMemory).toBe(true);
      // The right prefix with another secret is refused from memory too.
      expect(await cache.authenticate(em(), `${tenant.key.slice(0, 17)}${'A'.repeat(43)}`)).toBeNull();
      await revokeApiKey(em(), tenant.apiKeyId);
      await waitFor(async () => (await cache.authenticate(em(), tenant.key)) === null, 5_000, 'the revocation to reach the cache');
    } finally {
      await cache.stop();
    }
  });

  it('refuses a revoked key from its next request on in every API process, even while each still remembers it', async () => {
    const tenant = await createTenant(first.orm, ['admin']);
    const body = JSON.stringify(envelope('customer.created', { name: 'Cached Key Ltd' }));
    const timestamp = String(Math.floor(Date.now() / 1000));
    const inbound = (baseUrl: string, headers: Record<string, string> = {}) =>
      request(baseUrl, 'POST', '/webhooks/inbound', {
        key: tenant.key,
        rawBody: body,
        headers: { 'Content-Type': 'application/json', 'X-Webhook-Timestamp': timestamp, 'X-Webhook-Signature': signWebhook(tenant.signingSecret, timestamp, body), ...headers },
      });
    // Both processes have used the key; one has a response stored under an Idempotency-Key.
    for (const stack of [first, second]) expect((await request(stack.baseUrl, 'GET', '/api/v1/projects', { key: tenant.key })).status).toBe(200);
    expect((await inbound(second.baseUrl, { 'Idempotency-Key': 'before-revocation' })).status).toBe(200);

    // Unannounced (this file's database only), so both processes still hold the key in memory: the database refuses it.
    await first.em().execute('alter table api_keys disable trigger api_keys_notify');
    try {
      await revokeApiKey(first.em(), tenant.apiKeyId);
    } finally {
      await first.em().execute('alter table api_keys enable trigger api_keys_notify');
    }
    for (const stack of [first, second]) {
      const rest = await request(stack.baseUrl, 'GET', '/api/v1/projects', { key: tenant.key });
      expect(rest.status).toBe(401);
      expect(rest.body.error).toMatchObject({ code: 'UNAUTHORIZED', details: { field: 'X-API-Key' } });
      expect((await inbound(stack.baseUrl)).status).toBe(401);
      expect((await inbound(stack.baseUrl, { 'Idempotency-Key': 'before-revocation' })).status).toBe(401);
    }
  });
});
