import { randomUUID } from 'node:crypto';
import { type RunningApi, startApi } from '../../src/api/server';
import { consolePages } from '../../src/console/app';
import { createUser } from '../../src/console/users/users-service';
import { SecretBox } from '../../src/crypto/secret-box';
import { ApiKeyCache } from '../../src/domain/accounts/api-key-cache';
import { FeedWaits } from '../../src/delivery/feeds/feed-waits';
import { createCompany, issueApiKey } from '../../src/domain/accounts/api-keys-service';
import { registerEndpoint } from '../../src/delivery/endpoints/endpoints-service';
import { createLogger } from '../../src/logger';
import { createApiMetrics } from '../../src/metrics';
import { SchemaValidator } from '../../src/schemas/schema-validator';
import { temporalDeliveryWorkflows } from '../../src/temporal/temporal-delivery-workflows';
import { temporalWorkflows } from '../../src/temporal/temporal-workflows';
import { cliField, runCli } from '../helpers/cli';
import { ConsoleClient } from '../helpers/console';
import { startStack, type TestStack } from '../helpers/stack';

/**
 * The console's defences over plain HTTP (the browser test walks the pages): cookies and session expiry, CSRF
 * and roles on every form action, sign-in limits per address, refused input, tenant isolation.
 */
describe('console security', () => {
  let stack: TestStack;
  let proxied: RunningApi;
  let secure: RunningApi;

  async function companyWithUsers(name: string) {
    const company = await createCompany(stack.em(), name);
    const admin = await createUser(stack.em(), { companyId: company.id, email: `admin@${company.id}.example`, name: 'Admin', role: 'admin' });
    const viewer = await createUser(stack.em(), { companyId: company.id, email: `viewer@${company.id}.example`, name: 'Viewer', role: 'viewer' });
    const box = new SecretBox(stack.config.encryptionKey);
    const issued = await issueApiKey(stack.em(), box, { companyId: company.id, name: 'ERP', scopes: ['admin'] });
    const { endpoint } = await registerEndpoint(stack.em(), box, { allowLoopback: true }, { companyId: company.id, apiKeyId: issued.apiKey.id }, {
      url: 'https://localhost:9/hook',
      eventTypes: ['*'],
      payloadShape: 'A',
      description: null,
    });
    return {
      companyId: company.id,
      keyId: issued.apiKey.id,
      endpointId: endpoint.id,
      admin: { email: admin.user.email, password: admin.password, id: admin.user.id },
      viewer: { email: viewer.user.email, password: viewer.password, id: viewer.user.id },
    };
  }

  async function signedIn(user: { email: string; password: string }, baseUrl = stack.baseUrl, headers: Record<string, string> = {}) {
    const client = new ConsoleClient(baseUrl, headers);
    const answer = await client.signIn(user.email, user.password);
    expect(answer).toMatchObject({ status: 303, location: '/console/api-keys' });
    await client.get('/console/api-keys');
    return client;
  }

  const rows = async () =>
    (
      await stack.em().execute<Record<string, string>[]>(
        `select (select count(*) from api_keys where revoked_at is null) as keys, (select count(*) from webhook_endpoints where status = 'active') as endpoints,
                (select count(*) from webhook_deliveries) as deliveries, (select count(*) from console_users) as users,
                (select string_agg(role, ',' order by id) from console_users) as roles`,
      )
    )[0];

  beforeAll(async () => {
    stack = await startStack({ worker: false });
    const deps = { orm: stack.orm, temporal: stack.temporal, logger: createLogger('silent') };
    proxied = await startApi({ ...deps, config: { ...stack.config, trustProxy: true } });
    secure = await startApi({ ...deps, config: { ...stack.config, publicBaseUrl: 'https://console.example' } });
  });
  afterAll(async () => {
    await proxied?.close();
    await secure?.close();
    await stack?.close();
  });

  it('keeps the session in an HttpOnly, SameSite=Lax cookie (Secure over HTTPS) that logout, idleness and age end', async () => {
    const acme = await companyWithUsers('Cookie Co');
    const client = new ConsoleClient(stack.baseUrl);
    await client.get('/console/login');
    const answer = await client.post('/console/login', { email: acme.admin.email, password: acme.admin.password });
    const cookie = answer.headers.getSetCookie().find((c) => c.startsWith('console_session='))!;
    expect(cookie).toMatch(/^console_session=[A-Za-z0-9_-]{43}; Path=\/console; HttpOnly; SameSite=Lax$/);
    const [stored] = await stack.em().execute<{ token_hash: string }[]>('select token_hash from console_sessions');
    expect(stored!.token_hash).not.toBe(client.cookies.get('console_session'));

    const overHttps = new ConsoleClient(`http://127.0.0.1:${secure.port}`);
    await overHttps.get('/console/login');
    const https = await overHttps.post('/console/login', { email: acme.admin.email, password: acme.admin.password });
    expect(https.headers.getSetCookie().find((c) => c.startsWith('console_session='))).toMatch(/; Secure$/);
    const behindProxy = new ConsoleClient(`http://127.0.0.1:${proxied.port}`, { 'X-Forwarded-Proto': 'https' });
    await behindProxy.get('/console/login');
    const proxiedAnswer = await behindProxy.post('/console/login', { email: acme.admin.email, password: acme.admin.password });
    expect(proxiedAnswer.headers.getSetCookie().find((c) => c.startsWith('console_session='))).toMatch(/; Secure$/);

    await client.get('/console/api-keys');
    expect((await client.post('/console/logout')).location).toBe('/console/login?signed_out=1');
    const { text } = await client.get('/console/login?signed_out=1');
    expect(text).toContain('You have signed out.');
    client.cookies.set('console_session', /console_session=([^;]+)/.exec(cookie)![1]!);
    expect((await client.get('/console/api-keys')).location).toBe('/console/login?next=%2Fconsole%2Fapi-keys');

    for (const [next, lands] of [['/console/deliveries?status=failed', '/console/deliveries?status=failed'], ['//evil.example/console', '/console/api-keys'], ['https://evil.example', '/console/api-keys']]) {
      const returning = new ConsoleClient(stack.baseUrl);
      await returning.get(`/console/login?next=${encodeURIComponent(next!)}`);
      expect((await returning.post('/console/login', { email: acme.admin.email, password: acme.admin.password, next: next! })).location).toBe(lands);
    }

    const idle = await signedIn(acme.admin);
    await stack.em().execute(`update console_sessions set last_seen_at = now() - interval '31 minutes'`);
    expect((await idle.get('/console/endpoints')).status).toBe(303);
    const old = await signedIn(acme.admin);
    await stack.em().execute(`update console_sessions set expires_at = now() - interval '1 second'`);
    expect((await old.get('/console/endpoints')).status).toBe(303);
  });

  it('refuses every form action without its CSRF token, and every admin action to a viewer, before it runs', async () => {
    const acme = await companyWithUsers('Roles Co');
    const admin = await signedIn(acme.admin);
    const viewer = await signedIn(acme.viewer);
    const signedOut = new ConsoleClient(stack.baseUrl);
    const secretBox = new SecretBox(stack.config.encryptionKey);
    const apiKeys = new ApiKeyCache({ databaseUrl: stack.config.databaseUrl, secretBox, logger: createLogger('silent') });
    const pages = consolePages({
      ...stack,
      workflows: temporalWorkflows(stack.temporal, stack.config.temporal.taskQueues),
      deliveryWorkflows: temporalDeliveryWorkflows(stack.temporal, stack.config.temporal.taskQueues),
      secretBox,
      apiKeys,
      feedWaits: new FeedWaits({ databaseUrl: stack.config.databaseUrl, logger: createLogger('silent') }),
      validator: new SchemaValidator(),
      logger: createLogger('silent'),
      metrics: createApiMetrics(stack.orm),
    });
    const posts = pages.filter((p) => p.method === 'POST');
    expect(posts.length).toBeGreaterThanOrEqual(14);
    const before = await rows();
    for (const page of posts) {
      const path = `/console${page.path.replace(':id', randomUUID())}`;
      const noToken = await admin.post(path, { role: 'viewer', status: 'disabled' }, { csrf: false });
      expect([path, noToken.status]).toEqual([path, 403]);
      expect(noToken.text).toContain('did not carry a valid security token, so nothing was changed');
      const wrongToken = await admin.request('POST', path, { _csrf: 'x'.repeat(43) });
      expect([path, wrongToken.status]).toEqual([path, 403]);
      expect((await signedOut.post(path, {}, { csrf: false })).location).toBe('/console/login');
      if (page.role === 'admin') {
        const asViewer = await viewer.post(path, { role: 'admin' });
        expect([path, asViewer.status]).toEqual([path, 403]);
        expect(asViewer.text).toContain('Your role (viewer) can view but not change anything');
      }
    }
    for (const page of pages.filter((p) => p.method === 'GET' && p.role === 'admin')) {
      expect((await viewer.get(`/console${page.path.replace(':id', acme.endpointId)}`)).status).toBe(403);
    }
    expect(await rows()).toEqual(before);
    // The sign-in form has a token of its own.
    const fresh = new ConsoleClient(stack.baseUrl);
    await fresh.get('/console/login');
    expect((await fresh.post('/console/login', { email: acme.admin.email, password: acme.admin.password }, { csrf: false })).status).toBe(403);
  });

  it('limits sign-in per address, whichever accounts are tried, and not other addresses', async () => {
    const acme = await companyWithUsers('Limits Co');
    const from = (ip: string) => new ConsoleClient(`http://127.0.0.1:${proxied.port}`, { 'X-Forwarded-For': ip });
    const attacker = from('203.0.113.7');
    await attacker.get('/console/login');
    for (let i = 0; i < 20; i++) {
      expect((await attacker.post('/console/login', { email: `guess${i}@example.com`, password: 'not the password' })).status).toBe(401);
    }
    const limited = await attacker.post('/console/login', { email: acme.admin.email, password: acme.admin.password });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(800);
    expect(limited.text).toContain('Too many sign-in attempts');
    // The proxy appends the address it saw: what the client put before it does not count.
    const spoofing = from('198.51.100.1, 203.0.113.7');
    await spoofing.get('/console/login');
    expect((await spoofing.post('/console/login', { email: acme.admin.email, password: acme.admin.password })).status).toBe(429);
    const neighbour = from('203.0.113.8');
    await neighbour.get('/console/login');
    expect((await neighbour.post('/console/login', { email: acme.admin.email, password: acme.admin.password })).status).toBe(303);
    const [stored] = await stack.em().execute<{ subjects: string }[]>(`select string_agg(subject, ' ') as subjects from console_login_failures`);
    expect(stored!.subjects).not.toContain('@');
  }, 120_000);

  it('answers bad input with the form again (400 or 409) and a plain message, writing nothing', async () => {
    const acme = await companyWithUsers('Input Co');
    const admin = await signedIn(acme.admin);
    const before = await rows();
    const refused: [string, Record<string, string | string[]>, number, string][] = [
      ['/console/api-keys', { name: 'No scopes' }, 400, 'Choose at least one scope.'],
      ['/console/api-keys', { name: '', scopes: 'admin' }, 400, 'Enter a name of 1 to 100 characters.'],
      ['/console/api-keys', { name: 'Odd', scopes: ['admin', 'everything'] }, 400, 'Unknown scopes: everything.'],
      ['/console/endpoints', { url: 'http://hooks.example.com/x', event_types: '*' }, 400, 'url'],
      ['/console/endpoints', { url: 'https://10.0.0.1/hook', event_types: '*' }, 400, 'Webhook URL refused'],
      ['/console/endpoints', { url: 'https://localhost:9/hook', event_types: [] }, 400, 'Choose at least one event or category.'],
      ['/console/endpoints', { url: 'https://localhost:9/hook', event_types: 'project.nope' }, 400, 'neither an event type nor a category'],
      [`/console/endpoints/${acme.endpointId}`, { url: 'ftp://x', event_types: '*' }, 400, 'url'],
      [`/console/endpoints/${acme.endpointId}/resend-failed`, { since: 'yesterday' }, 400, 'Give the time to resend from'],
      ['/console/users', { email: 'not an email', name: 'X', role: 'viewer' }, 400, 'Enter an email address'],
      ['/console/users', { email: acme.viewer.email, name: 'Again', role: 'viewer' }, 409, 'There is already a user with the email'],
      ['/console/users', { email: 'new@example.com', name: 'X', role: 'owner' }, 400, 'Choose a role: admin or viewer.'],
      ['/console/account/password', { current_password: acme.admin.password, new_password: 'short', confirm_password: 'short' }, 400, 'at least 12 characters'],
      ['/console/account/password', { current_password: 'wrong', new_password: 'a long new password', confirm_password: 'a long new password' }, 400, 'current password is not correct'],
    ];
    for (const [path, form, status, message] of refused) {
      const answer = await admin.post(path, form);
      expect([path, message, answer.status]).toEqual([path, message, status]);
      expect(answer.text).toContain(message);
    }
    expect((await admin.get('/console/deliveries?status=lost&from=soon')).status).toBe(400);
    expect(await rows()).toEqual(before);
    expect((await admin.post('/console/users', { email: 'x@example.com', name: 'Nul\u0000', role: 'viewer' })).status).toBe(400);
  });

  it('manages an endpoint through the same services as REST: edit, disable and enable, rotate the secret once, delete', async () => {
    const acme = await companyWithUsers('Endpoints Co');
    const admin = await signedIn(acme.admin);
    const rest = async () => (await stack.em().execute<{ url: string; status: string; description: string | null; event_types: string[]; payload_shape: string; ordering: string; api_key_id: string | null; secret_sealed: string }[]>(
      'select url, status, description, event_types, payload_shape, ordering, api_key_id, secret_sealed from webhook_endpoints where id = ?', [acme.endpointId],
    ))[0]!;
    const before = await rest();
    const edit = await admin.get(`/console/endpoints/${acme.endpointId}/edit`);
    expect(edit.text).toContain('value="https://localhost:9/hook"');
    expect(edit.text).toContain('id="ordering-none" name="ordering" value="none" checked');
    const saved = await admin.post(`/console/endpoints/${acme.endpointId}`, {
      url: 'https://localhost:10/hook',
      event_types: ['workorder.created', 'po.*'],
      payload_shape: 'B',
      ordering: 'per_record',
      description: '',
      api_key_id: '',
    });
    expect(saved.location).toBe(`/console/endpoints/${acme.endpointId}`);
    expect(await rest()).toMatchObject({ url: 'https://localhost:10/hook', event_types: ['work_order.created', 'po.*'], payload_shape: 'B', ordering: 'per_record', description: null, api_key_id: null });
    const page = (await admin.get(saved.location!)).text;
    expect(page).toContain('The endpoint is saved.');
    expect(page).toContain("per record: one record&#39;s deliveries at a time, in commit order");
    expect((await admin.get(`/console/endpoints/${acme.endpointId}/edit`)).text).toContain('id="ordering-per_record" name="ordering" value="per_record" checked');
    const refused = await admin.post(`/console/endpoints/${acme.endpointId}`, { url: 'https://localhost:10/hook', event_types: ['po.*'], payload_shape: 'B', ordering: 'fifo', description: '', api_key_id: '' });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('<fieldset class="field-error">\n        <legend>Ordering (webhooks)</legend>');
    expect((await rest()).ordering).toBe('per_record');

    await admin.post(`/console/endpoints/${acme.endpointId}/status`, { status: 'disabled' });
    expect((await rest()).status).toBe('disabled');
    await admin.get(`/console/endpoints/${acme.endpointId}`);
    await admin.post(`/console/endpoints/${acme.endpointId}/status`, { status: 'active' });
    expect((await rest()).status).toBe('active');

    await admin.get(`/console/endpoints/${acme.endpointId}/rotate-secret`);
    const rotated = await admin.post(`/console/endpoints/${acme.endpointId}/rotate-secret`);
    const secret = /id="endpoint-secret" type="text" value="(whsec_[A-Za-z0-9_-]+)"/.exec(rotated.text)?.[1];
    expect(secret).toBeDefined();
    expect((await rest()).secret_sealed).not.toBe(before.secret_sealed);
    expect((await admin.get(`/console/endpoints/${acme.endpointId}`)).text).not.toContain(secret!);

    await admin.get(`/console/endpoints/${acme.endpointId}/delete`);
    expect((await admin.post(`/console/endpoints/${acme.endpointId}/delete`)).location).toBe('/console/endpoints');
    expect((await rest()).status).toBe('deleted');
    expect((await admin.get(`/console/endpoints/${acme.endpointId}`)).status).toBe(404);
  });

  it('keeps each company to its own keys, endpoints and users, and every company to at least one admin', async () => {
    const a = await companyWithUsers('Tenant A');
    const b = await companyWithUsers('Tenant B');
    const adminB = await signedIn(b.admin);
    expect((await adminB.get(`/console/endpoints/${a.endpointId}`)).status).toBe(404);
    expect((await adminB.get(`/console/api-keys/${a.keyId}/revoke`)).status).toBe(404);
    expect((await adminB.post(`/console/api-keys/${a.keyId}/revoke`)).status).toBe(404);
    expect((await adminB.post(`/console/endpoints/${a.endpointId}/delete`)).status).toBe(404);
    expect((await adminB.post(`/console/users/${a.viewer.id}/remove`)).status).toBe(404);
    expect((await adminB.get('/console/api-keys')).text).not.toContain(a.keyId);
    const before = await rows();

    const demote = await adminB.post(`/console/users/${b.admin.id}/role`, { role: 'viewer' });
    expect(demote.status).toBe(409);
    expect(demote.text).toContain('A company keeps at least one admin');
    expect((await adminB.post(`/console/users/${b.admin.id}/remove`)).status).toBe(409);
    expect(await rows()).toEqual(before);
    expect((await adminB.post(`/console/users/${b.viewer.id}/role`, { role: 'admin' })).location).toBe('/console/users');
    expect((await adminB.post(`/console/users/${b.admin.id}/remove`)).location).toBe('/console/login');
    expect((await adminB.get('/console/api-keys')).status).toBe(303);
  });

  it('ends other sessions on a password change, and the CLI resets a password', async () => {
    const acme = await companyWithUsers('Password Co');
    const first = await signedIn(acme.viewer);
    const second = await signedIn(acme.viewer);
    await second.get('/console/account');
    const changed = await second.post('/console/account/password', { current_password: acme.viewer.password, new_password: 'correct horse battery', confirm_password: 'correct horse battery' });
    expect(changed.location).toBe('/console/account');
    expect((await second.get('/console/account')).text).toContain('Your password is changed');
    expect((await first.get('/console/account')).status).toBe(303);

    const listed = await runCli(stack, 'user', 'list', '--company', acme.companyId);
    expect(listed.stdout).toContain(`${acme.viewer.email}  Viewer  viewer`);
    const reset = await runCli(stack, 'user', 'reset-password', acme.viewer.email.toUpperCase());
    expect(reset.code).toBe(0);
    expect((await second.get('/console/account')).status).toBe(303);
    expect((await new ConsoleClient(stack.baseUrl).signIn(acme.viewer.email, 'correct horse battery')).status).toBe(401);
    await signedIn({ email: acme.viewer.email, password: cliField(reset.stdout, 'password')! });
    const duplicate = await runCli(stack, 'user', 'create', '--company', acme.companyId, '--email', acme.admin.email, '--name', 'Again');
    expect(duplicate).toMatchObject({ code: 1, stderr: expect.stringContaining('There is already a user with the email') });
  }, 60_000);
});
