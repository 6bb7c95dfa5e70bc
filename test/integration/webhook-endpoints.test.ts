import { startReceiver, type TestReceiver } from '../helpers/https-receiver';
import { createTenant, request, startStack, testConfig, type Tenant, type TestStack } from '../helpers/stack';
import { addApiKey } from '../helpers/webhooks';

describe('webhook endpoint registration', () => {
  let strict: TestStack; // production settings: no loopback targets
  let local: TestStack; // WEBHOOK_ALLOW_LOOPBACK=true, as tests and local development use
  let tenant: Tenant;
  let hook: TestReceiver;

  beforeAll(async () => {
    const config = await testConfig({ WEBHOOK_ALLOW_LOOPBACK: 'false' });
    [strict, local] = await Promise.all([
      startStack({ worker: false, config }),
      startStack({ worker: false, config: { ...config, webhooks: { ...config.webhooks, allowLoopback: true } } }),
    ]);
    tenant = await createTenant(strict.orm, ['admin']);
    hook = await startReceiver();
  });
  afterAll(async () => {
    await hook.close();
    await Promise.all([strict.close(), local.close()]);
  });

  const register = (stack: TestStack, body: Record<string, unknown>, key = tenant.key) =>
    request(stack.baseUrl, 'POST', '/api/v1/webhook-endpoints', { key, body });

  it.each([
    ['an http:// URL', 'http://hooks.example.com/in', 'must use https'],
    ['a loopback address', 'https://127.0.0.1:8443/in', 'loopback'],
    ['localhost', 'https://localhost/in', 'loopback'],
    ['IPv6 loopback', 'https://[::1]/in', 'loopback'],
    ['a private address', 'https://10.1.2.3/in', 'private'],
    ['another private range', 'https://192.168.10.20/in', 'private'],
    ['the cloud metadata address', 'https://169.254.169.254/latest/meta-data', 'metadata'],
    ['a user name in the URL', 'https://user:pass@hooks.example.com/in', 'user name'],
    ['something that is not a URL', 'not a url', 'not a valid URL'],
  ])('refuses %s', async (_, url, reason) => {
    const response = await register(strict, { url, event_types: ['*'] });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'url', reason: expect.stringContaining(reason) } });
  });

  it.each([
    ['a loopback address', 'https://localhost/token', 'loopback'],
    ['the cloud metadata address', 'https://169.254.169.254/token', 'metadata'],
    ['an http:// URL', 'http://auth.example.com/token', 'must use https'],
  ])('refuses an OAuth token URL on %s, as it does the endpoint URL', async (_, tokenUrl, reason) => {
    const oauth = { token_url: tokenUrl, client_id: 'erp', client_secret: 'secret' };
    const response = await register(strict, { url: 'https://1.1.1.1/in', event_types: ['*'], authentication: { oauth } });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'authentication.oauth.token_url', reason: expect.stringContaining(reason) } });
  });

  it('accepts loopback only when WEBHOOK_ALLOW_LOOPBACK is on, and private addresses never', async () => {
    expect((await register(local, { url: hook.url, event_types: ['*'] })).status).toBe(201);
    expect((await register(local, { url: 'https://[::1]:9/in', event_types: ['*'] })).status).toBe(201);
    expect((await register(local, { url: 'http://localhost:9/in', event_types: ['*'] })).status).toBe(400);
    expect((await register(local, { url: 'https://10.0.0.8/in', event_types: ['*'] })).status).toBe(400);
    expect((await register(local, { url: 'https://169.254.169.254/', event_types: ['*'] })).status).toBe(400);
  });

  it('issues a secret once and shows the endpoint without it afterwards', async () => {
    const created = await register(local, { url: hook.url, event_types: ['employee.created', 'project.*', 'workorder.created'], description: 'ERP' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      delivery: 'webhook',
      url: hook.url,
      description: 'ERP',
      event_types: ['employee.created', 'project.*', 'work_order.created'],
      payload_shape: 'A',
      ordering: 'none',
      status: 'active',
      disabled_reason: null,
      disabled_at: null,
      max_attempts_per_second: null,
      circuit_breaker: { state: 'closed', failing_deliveries: 0, opened_at: null, next_probe_at: null },
      previous_secret_expires_at: null,
      authentication: { headers: [], oauth: null, client_certificate: null },
      filter: null,
      transformation: null,
      api_key_id: tenant.apiKeyId,
      feed: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
    });
    const read = await request(local.baseUrl, 'GET', `/api/v1/webhook-endpoints/${created.body.id}`, { key: tenant.key });
    expect(read.body).not.toHaveProperty('secret');
    const list = await request(local.baseUrl, 'GET', '/api/v1/webhook-endpoints', { key: tenant.key });
    expect(JSON.stringify(list.body)).not.toContain(created.body.secret);
    const [stored] = await local.em().execute<{ secret_sealed: string }[]>('select secret_sealed from webhook_endpoints where id = ?', [created.body.id]);
    expect(stored!.secret_sealed).not.toContain(created.body.secret.slice(6));

    const rotated = await request(local.baseUrl, 'POST', `/api/v1/webhook-endpoints/${created.body.id}/rotate-secret`, { key: tenant.key });
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(created.body.secret);
  });

  it('validates subscriptions and shapes', async () => {
    const unknown = await register(local, { url: hook.url, event_types: ['employee.created', 'spaceship.*'] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details).toEqual({ field: 'event_types', reason: expect.stringContaining('spaceship.*') });
    expect((await register(local, { url: hook.url, event_types: [] })).body.error.details.field).toBe('event_types');
    expect((await register(local, { url: hook.url, event_types: ['*'], payload_shape: 'C' })).body.error.details.field).toBe('payload_shape');
  });

  it('belongs to the registering key by default, to another key of the company, or to none', async () => {
    const other = await addApiKey(local, tenant);
    expect((await register(local, { url: hook.url, event_types: ['*'], api_key_id: other.apiKeyId })).body.api_key_id).toBe(other.apiKeyId);
    expect((await register(local, { url: hook.url, event_types: ['*'], api_key_id: null })).body.api_key_id).toBeNull();
    const stranger = await createTenant(local.orm, ['admin']);
    const foreign = await register(local, { url: hook.url, event_types: ['*'], api_key_id: stranger.apiKeyId });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.details.field).toBe('api_key_id');
  });

  it('updates partially, disables, deletes, and hides endpoints from other companies', async () => {
    const created = (await register(local, { url: hook.url, event_types: ['*'] })).body;
    const path = `/api/v1/webhook-endpoints/${created.id}`;
    const updated = await request(local.baseUrl, 'PUT', path, { key: tenant.key, body: { status: 'disabled', payload_shape: 'B' } });
    expect(updated.body).toMatchObject({ status: 'disabled', payload_shape: 'B', url: hook.url, event_types: ['*'] });
    expect((await request(local.baseUrl, 'PUT', path, { key: tenant.key, body: { url: 'https://10.9.9.9/' } })).status).toBe(400);
    expect((await request(local.baseUrl, 'PUT', path, { key: tenant.key, body: {} })).status).toBe(400);

    const stranger = await createTenant(local.orm, ['admin']);
    expect((await request(local.baseUrl, 'GET', path, { key: stranger.key })).status).toBe(404);
    expect((await request(local.baseUrl, 'DELETE', path, { key: stranger.key })).status).toBe(404);

    expect((await request(local.baseUrl, 'DELETE', path, { key: tenant.key })).status).toBe(204);
    expect((await request(local.baseUrl, 'GET', path, { key: tenant.key })).status).toBe(404);
    const list = await request(local.baseUrl, 'GET', '/api/v1/webhook-endpoints?limit=100', { key: tenant.key });
    expect(list.body.data.map((e: { id: string }) => e.id)).not.toContain(created.id);
  });

  it('needs the webhooks:manage scope', async () => {
    const reader = await createTenant(local.orm, ['projects:read', 'webhooks:inbound']);
    const response = await register(local, { url: hook.url, event_types: ['*'] }, reader.key);
    expect(response.status).toBe(403);
    expect(response.body.error.details.reason).toBe('missing scope webhooks:manage');
  });
});
