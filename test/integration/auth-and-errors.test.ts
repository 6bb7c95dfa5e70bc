import { revokeApiKey } from '../../src/domain/accounts/api-keys-service';
import { seedProject } from '../helpers/fixtures';
import { createTenant, envelope, request, sendInbound, startStack, type Tenant, type TestStack } from '../helpers/stack';

const errorShape = (code: string, field: string | null) => ({
  error: { code, message: expect.any(String), details: { field, reason: expect.any(String) } },
});

describe('authentication, scopes, tenancy and error bodies', () => {
  let stack: TestStack;
  let admin: Tenant;

  beforeAll(async () => {
    stack = await startStack({ worker: false });
    admin = await createTenant(stack.orm, ['admin']);
  });
  afterAll(() => stack.close());

  it('answers 401 without a key, with an unknown key and with a revoked key', async () => {
    const missing = await request(stack.baseUrl, 'GET', '/api/v1/projects');
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual(errorShape('UNAUTHORIZED', 'X-API-Key'));

    const unknown = await request(stack.baseUrl, 'GET', '/api/v1/projects', { key: `cik_AAAAAAAAAAAA_${'x'.repeat(43)}` });
    expect(unknown.status).toBe(401);
    const garbage = await request(stack.baseUrl, 'GET', '/api/v1/projects', { key: 'not-a-key' });
    expect(garbage.status).toBe(401);

    const doomed = await createTenant(stack.orm, ['projects:read']);
    expect((await request(stack.baseUrl, 'GET', '/api/v1/projects', { key: doomed.key })).status).toBe(200);
    await revokeApiKey(stack.em(), doomed.apiKeyId);
    const revoked = await request(stack.baseUrl, 'GET', '/api/v1/projects', { key: doomed.key });
    expect(revoked.status).toBe(401);
    expect(revoked.body).toEqual(errorShape('UNAUTHORIZED', 'X-API-Key'));
  });

  it('answers 401 to a key whose secret part is wrong even when its prefix is real', async () => {
    const forged = `${admin.key.slice(0, 17)}${'A'.repeat(43)}`;
    expect((await request(stack.baseUrl, 'GET', '/api/v1/projects', { key: forged })).status).toBe(401);
  });

  it('answers 403 naming the missing scope', async () => {
    const reader = await createTenant(stack.orm, ['projects:read']);
    const response = await request(stack.baseUrl, 'POST', '/api/v1/work-orders', { key: reader.key, body: { title: 'x', project_id: admin.companyId } });
    expect(response.status).toBe(403);
    expect(response.body).toEqual(errorShape('FORBIDDEN', 'X-API-Key'));
    expect(response.body.error.details.reason).toBe('missing scope work-orders:write');

    const inbound = await sendInbound(stack.baseUrl, reader, envelope('test.connection'));
    expect(inbound.status).toBe(403);
    expect(inbound.body.error.details.reason).toBe('missing scope webhooks:inbound');
  });

  it('answers 404 in the error shape for unknown routes and ids, 405 for wrong methods', async () => {
    const route = await request(stack.baseUrl, 'GET', '/api/v1/nothing-here', { key: admin.key });
    expect(route.status).toBe(404);
    expect(route.body).toEqual(errorShape('NOT_FOUND', 'path'));
    expect(route.headers.get('x-ratelimit-limit')).toBe('60');

    const outside = await request(stack.baseUrl, 'GET', '/');
    expect(outside.status).toBe(404);
    expect(outside.body).toEqual(errorShape('NOT_FOUND', 'path'));

    const id = await request(stack.baseUrl, 'GET', '/api/v1/work-orders/0193f4a0-0000-7000-8000-000000000001', { key: admin.key });
    expect(id.status).toBe(404);
    expect(id.body).toEqual(errorShape('NOT_FOUND', 'id'));
    const notUuid = await request(stack.baseUrl, 'GET', '/api/v1/work-orders/WO-1', { key: admin.key });
    expect(notUuid.status).toBe(404);

    const method = await request(stack.baseUrl, 'PATCH', '/api/v1/projects', { key: admin.key });
    expect(method.status).toBe(405);
    expect(method.body).toEqual(errorShape('METHOD_NOT_ALLOWED', 'method'));
  });

  it('answers 400 for malformed JSON, 415 for other media types, 413 past the body limit', async () => {
    const malformed = await request(stack.baseUrl, 'POST', '/api/v1/work-orders', {
      key: admin.key,
      rawBody: '{"title": ',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual(errorShape('INVALID_REQUEST', 'body'));

    const form = await request(stack.baseUrl, 'POST', '/api/v1/work-orders', {
      key: admin.key,
      rawBody: 'title=x',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(415);
    expect(form.body).toEqual(errorShape('UNSUPPORTED_MEDIA_TYPE', 'Content-Type'));

    const huge = await request(stack.baseUrl, 'POST', '/api/v1/work-orders', {
      key: admin.key,
      body: { title: 'x'.repeat(stack.config.bodyLimitBytes + 1) },
    });
    expect(huge.status).toBe(413);
    expect(huge.body).toEqual(errorShape('PAYLOAD_TOO_LARGE', 'body'));
  });

  it("never shows one company another company's records", async () => {
    const other = await createTenant(stack.orm, ['admin']);
    const project = await seedProject(stack, other);
    const created = await request(stack.baseUrl, 'POST', '/api/v1/work-orders', { key: other.key, body: { title: 'Pour slab', project_id: project } });
    expect(created.status).toBe(201);

    const peek = await request(stack.baseUrl, 'GET', `/api/v1/work-orders/${created.body.id}`, { key: admin.key });
    expect(peek.status).toBe(404);
    expect(JSON.stringify(peek.body)).not.toContain('Pour slab');

    const borrow = await request(stack.baseUrl, 'POST', '/api/v1/work-orders', { key: admin.key, body: { title: 'x', project_id: project } });
    expect(borrow.status).toBe(400);
    expect(borrow.body.error.details.field).toBe('project_id');

    const list = await request(stack.baseUrl, 'GET', '/api/v1/projects', { key: admin.key });
    expect(list.body.data.map((p: { id: string }) => p.id)).not.toContain(project);
  });

  it('echoes a request id, or makes one', async () => {
    const given = await request(stack.baseUrl, 'GET', '/api/v1/projects', { key: admin.key, headers: { 'X-Request-Id': 'trace-123' } });
    expect(given.headers.get('x-request-id')).toBe('trace-123');
    const made = await request(stack.baseUrl, 'GET', '/api/v1/projects', { key: admin.key });
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('reports health of PostgreSQL and Temporal without a key', async () => {
    const health = await request(stack.baseUrl, 'GET', '/health');
    expect(health).toMatchObject({ status: 200, body: { status: 'ok', database: 'ok', temporal: 'ok' } });
  });
});
