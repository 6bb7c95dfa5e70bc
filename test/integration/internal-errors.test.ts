import { createTenant, request, startStack, type TestStack } from '../helpers/stack';

describe('unexpected failures', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack({ worker: false });
  });
  afterAll(async () => {
    await stack.api.close();
    await stack.temporal.connection.close();
  });

  it('answer 500 in the error shape, quoting the request id, with no SQL or stack trace', async () => {
    const tenant = await createTenant(stack.orm, ['admin']);
    // The database goes away under the running API.
    await stack.orm.close(true);
    const response = await request(stack.baseUrl, 'GET', '/api/v1/projects', { key: tenant.key, headers: { 'X-Request-Id': 'req-500-check' } });
    expect(response.status).toBe(500);
    expect(response.body).toEqual({
      error: {
        code: 'INTERNAL_ERROR',
        message: 'An unexpected error occurred (request id req-500-check)',
        details: { field: null, reason: 'internal error' },
      },
    });
    const text = JSON.stringify(response.body).toLowerCase();
    for (const leak of ['select', 'api_keys', ' at ', 'knex', 'pool']) expect(text).not.toContain(leak);
  });
});
