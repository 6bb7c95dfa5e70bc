import { awayFromMinuteEdge } from '../helpers/processes';
import { createTenant, envelope, request, sendInbound, startStack, testConfig, type TestStack } from '../helpers/stack';

/** Sends `count` requests one after another, returning their statuses. */
async function statuses(count: number, send: (i: number) => Promise<{ status: number }>): Promise<number[]> {
  const result: number[] = [];
  for (let i = 0; i < count; i++) result.push((await send(i)).status);
  return result;
}

describe('rate limits (counted in PostgreSQL, per API key)', () => {
  let first: TestStack;
  let second: TestStack;

  beforeAll(async () => {
    // Two API processes on one database.
    const config = await testConfig();
    [first, second] = await Promise.all([startStack({ worker: false, config }), startStack({ worker: false, config })]);
  });
  afterAll(async () => {
    await Promise.all([first.close(), second.close()]);
  });
  beforeEach(awayFromMinuteEdge);

  it('allows 60 REST requests a minute, then answers 429 with Retry-After, without counting refused ones', async () => {
    const tenant = await createTenant(first.orm, ['projects:read']);
    const firstResponse = await request(first.baseUrl, 'GET', '/api/v1/projects', { key: tenant.key });
    expect(firstResponse.headers.get('ratelimit-policy')).toBe('"minute";q=60;w=60, "hour";q=1000;w=3600, "day";q=10000;w=86400');
    expect(firstResponse.headers.get('x-ratelimit-limit')).toBe('60');
    expect(firstResponse.headers.get('x-ratelimit-remaining')).toBe('59');
    expect(Number(firstResponse.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);

    const rest = await statuses(59, () => request(first.baseUrl, 'GET', '/api/v1/projects', { key: tenant.key }));
    expect(rest.every((s) => s === 200)).toBe(true);

    const refused = await request(first.baseUrl, 'GET', '/api/v1/projects', { key: tenant.key });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      error: { code: 'RATE_LIMITED', message: expect.stringContaining('60 per minute'), details: { field: 'X-API-Key', reason: expect.any(String) } },
    });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');

    // Refused requests are not counted: the hour window shows exactly the 60 that were served.
    await request(first.baseUrl, 'GET', '/api/v1/projects', { key: tenant.key });
    const [, hour] = refused.headers.get('ratelimit')!.split(', ');
    expect(hour).toMatch(/^"hour";r=940;t=\d+$/);
  });

  it('is one budget for all API processes', async () => {
    const tenant = await createTenant(first.orm, ['projects:read']);
    const served = await statuses(60, (i) => request(i % 2 ? second.baseUrl : first.baseUrl, 'GET', '/api/v1/projects', { key: tenant.key }));
    expect(served.filter((s) => s === 200)).toHaveLength(60);
    expect((await request(first.baseUrl, 'GET', '/api/v1/projects', { key: tenant.key })).status).toBe(429);
    expect((await request(second.baseUrl, 'GET', '/api/v1/projects', { key: tenant.key })).status).toBe(429);
  });

  it('keeps the budget exact under concurrent requests across processes', async () => {
    const tenant = await createTenant(first.orm, ['projects:read']);
    const responses = await Promise.all(
      Array.from({ length: 80 }, (_, i) => request(i % 2 ? second.baseUrl : first.baseUrl, 'GET', '/api/v1/projects', { key: tenant.key })),
    );
    expect(responses.filter((r) => r.status === 200)).toHaveLength(60);
    expect(responses.filter((r) => r.status === 429)).toHaveLength(20);
  });

  it('counts each key on its own', async () => {
    const busy = await createTenant(first.orm, ['projects:read']);
    const quiet = await createTenant(first.orm, ['projects:read']);
    await statuses(60, () => request(first.baseUrl, 'GET', '/api/v1/projects', { key: busy.key }));
    expect((await request(first.baseUrl, 'GET', '/api/v1/projects', { key: busy.key })).status).toBe(429);
    expect((await request(first.baseUrl, 'GET', '/api/v1/projects', { key: quiet.key })).status).toBe(200);
  });

  it('allows an inbound burst of 50 a minute, with its own headers', async () => {
    const tenant = await createTenant(first.orm, ['webhooks:inbound']);
    const served = await statuses(50, () => sendInbound(first.baseUrl, tenant, envelope('test.connection')));
    expect(served.every((s) => s === 200)).toBe(true);
    const refused = await sendInbound(second.baseUrl, tenant, envelope('test.connection'));
    expect(refused.status).toBe(429);
    expect(refused.headers.get('ratelimit-policy')).toBe('"burst";q=50;w=60, "hour";q=1000;w=3600');
    expect(refused.headers.get('retry-after')).toBeTruthy();
  });
});

describe('RATE_LIMIT_MULTIPLIER (load and fuzz tests)', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ worker: false, config: await testConfig({ RATE_LIMIT_MULTIPLIER: '3' }) });
  });
  afterAll(() => stack.close());
  beforeEach(awayFromMinuteEdge);

  it('multiplies every window of every policy, and the limit still holds', async () => {
    const tenant = await createTenant(stack.orm, ['projects:read', 'webhooks:inbound']);
    const served = await statuses(180, () => request(stack.baseUrl, 'GET', '/api/v1/projects', { key: tenant.key }));
    expect(served.filter((s) => s === 200)).toHaveLength(180);
    const refused = await request(stack.baseUrl, 'GET', '/api/v1/projects', { key: tenant.key });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('ratelimit-policy')).toBe('"minute";q=180;w=60, "hour";q=3000;w=3600, "day";q=30000;w=86400');
    const inbound = await sendInbound(stack.baseUrl, tenant, envelope('test.connection'));
    expect(inbound.headers.get('ratelimit-policy')).toBe('"burst";q=150;w=60, "hour";q=3000;w=3600');
  });
});
