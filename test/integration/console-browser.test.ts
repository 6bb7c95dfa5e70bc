import type { Browser, BrowserContext, Page } from 'playwright-core';
import { cliField, runCli } from '../helpers/cli';
import { describeInBrowser, launchChromium } from '../helpers/chromium';
import { accessibilityProblems, focusOutline, screenshot, writeActions } from '../helpers/console';
import { startReceiver, type TestReceiver } from '../helpers/https-receiver';
import { waitFor } from '../helpers/processes';
import { envelope, sendInbound, startStack, type Tenant, type TestStack } from '../helpers/stack';
import { verifiedAsReceiver } from '../helpers/webhooks';

/**
 * The account settings console in headless Chromium against the real stack (PostgreSQL, Temporal, a worker and
 * a local HTTPS receiver): each step of issue 13's acceptance list, in the order a company's admin takes them.
 * Every page visited is checked for labels and names, and saved as a screenshot in docs/console/.
 */
describeInBrowser('console in a browser', () => {
  let stack: TestStack;
  let browser: Browser;
  let receiver: TestReceiver;
  let admin: BrowserContext;
  let page: Page;
  const offSite: string[] = [];
  const credentials = { email: 'ada@acme.example', password: '' };
  let companyId = '';
  let key: Tenant;
  let endpoint = { id: '', secret: '' };

  /** Goes to a console page and checks it is accessible. */
  async function visit(target: Page, path: string) {
    const response = await target.goto(`${stack.baseUrl}${path}`);
    expect(await accessibilityProblems(target)).toEqual([]);
    return response;
  }

  const deliveryStatus = async (id: string) =>
    (await stack.em().execute<{ status: string }[]>('select status from webhook_deliveries where id = ?', [id]))[0]?.status;
  const deliveriesOfEvent = async (eventType: string) =>
    (await stack.em().execute<{ id: string }[]>('select id from webhook_deliveries where event_type = ? order by created_at, id', [eventType])).map((r) => r.id);

  async function newContext() {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.on('request', (request) => {
      if (!request.url().startsWith(stack.baseUrl) && !request.url().startsWith('data:')) offSite.push(request.url());
    });
    return context;
  }

  beforeAll(async () => {
    stack = await startStack();
    receiver = await startReceiver();
    browser = await launchChromium();
    admin = await newContext();
    page = await admin.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await stack?.close();
  });
  afterEach(() => expect(offSite).toEqual([]));

  it("the CLI creates a company's first admin, who signs in with the keyboard alone", async () => {
    companyId = cliField((await runCli(stack, 'company', 'create', 'Acme Construction')).stdout, 'id')!;
    const created = await runCli(stack, 'user', 'create', '--company', companyId, '--email', 'Ada@Acme.example', '--name', 'Ada Admin');
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('role:      admin');
    credentials.password = cliField(created.stdout, 'password')!;

    await page.goto(`${stack.baseUrl}/console`);
    expect(new URL(page.url()).pathname).toBe('/console/login');
    expect(await accessibilityProblems(page)).toEqual([]);
    await screenshot(page, 'sign-in');
    await page.keyboard.press('Tab');
    expect(await focusOutline(page)).toMatchObject({ text: 'Skip to content', outline: 'solid 3px' });
    await page.keyboard.press('Tab');
    expect(await focusOutline(page)).toMatchObject({ tag: 'INPUT', outline: 'solid 3px' });
    await page.keyboard.type(credentials.email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(credentials.password);
    await page.keyboard.press('Enter');
    await page.waitForURL('**/console/api-keys');
    expect(await page.locator('h1').innerText()).toBe('API keys');
    expect(await page.locator('.who').innerText()).toBe('ada@acme.example (admin)');
  });

  it('creates an API key, shown once, that signs an inbound request answering 200', async () => {
    await page.getByRole('link', { name: 'Create an API key' }).click();
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.getByLabel('Name').fill('ERP sync');
    await page.check('input[value="webhooks:inbound"]');
    await page.check('input[value="employees:read"]');
    await screenshot(page, 'api-key-new');
    await page.getByRole('button', { name: 'Create key' }).click();
    expect(await page.locator('h1').innerText()).toBe('API key created');
    expect(await page.getByRole('button', { name: 'Copy API key' }).isVisible()).toBe(true);
    key = { companyId, apiKeyId: '', key: await page.inputValue('#issued-key'), signingSecret: await page.inputValue('#issued-signing-secret') };
    expect(key.key).toMatch(/^cik_/);
    expect(key.signingSecret).toMatch(/^whsec_/);
    await screenshot(page, 'api-key-created');

    const inbound = await sendInbound(stack.baseUrl, key, envelope('test.connection', {}));
    expect(inbound.status).toBe(200);

    await visit(page, '/console/api-keys');
    const row = page.locator('tr', { hasText: 'ERP sync' });
    expect(await row.innerText()).toContain('webhooks:inbound, employees:read');
    expect(await row.innerText()).not.toContain(key.key);
    expect(await row.locator('td').nth(4).innerText()).toMatch(/UTC$/);
    await screenshot(page, 'api-keys');
  });

  it('registers an endpoint on a local HTTPS receiver, choosing a category', async () => {
    await visit(page, '/console/endpoints');
    await page.getByRole('link', { name: 'Register an endpoint' }).click();
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.getByLabel('URL').fill(receiver.url);
    await page.getByLabel('Description (optional)').fill('HR system');
    await page.getByLabel('All employee.* events').check();
    await screenshot(page, 'endpoint-new');
    await page.getByRole('button', { name: 'Register endpoint' }).click();
    expect(await page.locator('h1').innerText()).toBe('Endpoint registered');
    endpoint.secret = await page.inputValue('#endpoint-secret');
    expect(endpoint.secret).toMatch(/^whsec_/);
    await screenshot(page, 'endpoint-secret');
    await page.getByRole('link', { name: 'Go to the endpoint' }).click();
    endpoint = { ...endpoint, id: new URL(page.url()).pathname.split('/').pop()! };
    expect(await page.locator('.summary').innerText()).toContain('employee.*');
  });

  it('sends a test delivery and shows its result in place', async () => {
    const before = page.url();
    await page.getByRole('button', { name: 'Send a test delivery' }).click();
    await page.locator('#test-result .badge-delivered').waitFor();
    expect(page.url()).toBe(before);
    expect(await page.locator('#test-result').innerText()).toMatch(/succeeded\s+200/);
    const [test] = await receiver.waitForRequests(1, 30_000);
    expect(test!.headers['x-webhook-event']).toBe('webhook.test');
    expect(verifiedAsReceiver(endpoint.secret, test!)).toBe(true);
    expect(await accessibilityProblems(page)).toEqual([]);
    await screenshot(page, 'endpoint');
  });

  it('shows the delivery of an event and its attempts in the log', async () => {
    const created = await sendInbound(stack.baseUrl, key, envelope('employee.created', { emp_number: 'E-100', name: 'Sam Carter', email: 'sam@acme.example', employee_type: 'site_worker' }));
    expect(created.status).toBe(200);
    const [, delivered] = await receiver.waitForRequests(2, 30_000);
    expect(delivered!.headers['x-webhook-event']).toBe('employee.created');
    const id = delivered!.headers['x-webhook-id'] as string;
    await waitFor(async () => (await deliveryStatus(id)) === 'delivered', 30_000, 'the delivery to be recorded');

    await visit(page, '/console/deliveries');
    await page.getByLabel('Event type').fill('employee.created');
    await page.getByRole('button', { name: 'Filter' }).click();
    const row = page.locator('tbody tr');
    expect(await row.count()).toBe(1);
    expect(await row.innerText()).toMatch(/employee\.created[\s\S]*delivered\s+1\s+200/);
    await screenshot(page, 'delivery-log');
    await row.getByRole('link').click();
    expect(await accessibilityProblems(page)).toEqual([]);
    expect(await page.locator('#webhook-id').innerText()).toBe(id);
    expect(await page.locator('table').innerText()).toMatch(/0\s+automatic[\s\S]*succeeded\s+200\s+\d+ ms/);
    expect(await page.locator('pre').innerText()).toContain('"emp_number": "E-100"');
    await screenshot(page, 'delivery');
  });

  it('shows a failure with its status code and error; after the fix, Resend delivers it with the same X-Webhook-ID', async () => {
    receiver.respondWith(() => ({ status: 503, body: 'down for maintenance' }));
    expect((await sendInbound(stack.baseUrl, key, envelope('employee.updated', { emp_number: 'E-100', phone: '+1 403 555 0101' }))).status).toBe(200);
    const [id] = await waitFor(async () => {
      const ids = await deliveriesOfEvent('employee.updated');
      return ids.length > 0 && ids;
    }, 30_000, 'the delivery');
    await waitFor(async () => (await deliveryStatus(id!)) === 'failed', 120_000, 'the delivery to fail');

    await visit(page, '/console/deliveries?status=failed');
    await page.locator('tbody tr', { hasText: 'employee.updated' }).getByRole('link').click();
    const attempts = await page.locator('table').innerText();
    expect(attempts.match(/permanent_failure|retryable_failure/g)).toHaveLength(6);
    expect(attempts).toContain('503');
    expect(attempts).toContain('HTTP 503');
    expect(attempts).toContain('down for maintenance');
    expect(await page.locator('.summary').innerText()).toMatch(/Status\s+failed[\s\S]*Last status code\s+503\s+Last error\s+HTTP 503/);
    await screenshot(page, 'delivery-failed');
    await visit(page, '/console/alerts');
    expect(await page.locator('tbody').innerText()).toContain(id);
    await screenshot(page, 'alerts');

    receiver.respondWith(() => ({ status: 200, body: '{"received":true}' }));
    const received = receiver.requests.length;
    await visit(page, `/console/deliveries/${id}`);
    await page.getByRole('button', { name: 'Resend' }).click();
    expect(await page.locator('.flash').innerText()).toContain('Resend requested');
    await waitFor(async () => (await deliveryStatus(id!)) === 'delivered', 60_000, 'the resent delivery');
    await page.reload();
    expect(await page.locator('.summary').innerText()).toContain('delivered');
    expect(await page.locator('table').innerText()).toMatch(/6\s+manual[\s\S]*succeeded\s+200/);
    const resent = receiver.requests.slice(received);
    expect(resent).toHaveLength(1);
    expect(resent[0]!.headers['x-webhook-id']).toBe(id);
    expect(resent[0]!.headers['x-webhook-retry']).toBe('6');
    expect(verifiedAsReceiver(endpoint.secret, resent[0]!)).toBe(true);
    expect(receiver.requests.filter((r) => r.headers['x-webhook-id'] === id)).toHaveLength(7);
    await visit(page, '/console/alerts');
    expect(await page.locator('main').innerText()).toContain('No open alerts.');
  }, 180_000);

  it("resends an endpoint's failed deliveries since a time in bulk", async () => {
    // A 4xx is a permanent failure: one attempt each (not a 410, which would disable the endpoint).
    receiver.respondWith(() => ({ status: 400, body: 'rejected' }));
    for (const phone of ['+1 403 555 0102', '+1 403 555 0103']) {
      expect((await sendInbound(stack.baseUrl, key, envelope('employee.updated', { emp_number: 'E-100', phone }))).status).toBe(200);
    }
    const ids = await waitFor(async () => {
      const all = (await deliveriesOfEvent('employee.updated')).slice(1);
      return all.length === 2 && (await Promise.all(all.map(deliveryStatus))).every((s) => s === 'failed') && all;
    }, 120_000, 'two failed deliveries');
    receiver.respondWith(() => ({ status: 200 }));
    await visit(page, `/console/endpoints/${endpoint.id}`);
    await page.getByRole('button', { name: 'Resend failed deliveries' }).click();
    expect(await page.locator('.flash').innerText()).toMatch(/^Resend requested for 2 failed or cancelled deliveries made since/);
    await waitFor(async () => (await Promise.all(ids.map(deliveryStatus))).every((s) => s === 'delivered'), 60_000, 'both to be delivered');
  }, 180_000);

  it("adds an API gateway's secret header; the pages show only its hint, and a test delivery carries it", async () => {
    const gatewayKey = `gw_${'k'.repeat(12)}${Date.now()}`;
    const gateway = await startReceiver();
    gateway.respondWith((received) => (received.headers['x-gateway-key'] === gatewayKey ? { status: 200 } : { status: 401, body: 'gateway key missing' }));
    try {
      await visit(page, '/console/endpoints/new');
      await page.getByLabel('URL').fill(gateway.url);
      await page.getByLabel('All project.* events').check();
      await page.getByLabel('Header 1 name').fill('X-Gateway-Key');
      await page.getByLabel('Header 1 value').fill(gatewayKey);
      await page.check('#header-secret-0');
      await page.getByRole('button', { name: 'Register endpoint' }).click();
      await page.getByRole('link', { name: 'Go to the endpoint' }).click();
      const summary = await page.locator('.summary').innerText();
      expect(summary).toContain(`X-Gateway-Key: secret, ends in ${gatewayKey.slice(-4)}`);
      expect(await page.content()).not.toContain(gatewayKey);
      await screenshot(page, 'endpoint-authentication');

      await page.getByRole('button', { name: 'Send a test delivery' }).click();
      await page.locator('#test-result .badge-delivered').waitFor();
      expect(gateway.requests.at(-1)!.headers['x-gateway-key']).toBe(gatewayKey);

      // Saved unchanged, the secret left blank is kept.
      await page.getByRole('link', { name: 'Edit' }).click();
      expect(await accessibilityProblems(page)).toEqual([]);
      expect(await page.inputValue('#header-value-0')).toBe('');
      expect(await page.content()).not.toContain(gatewayKey);
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('button', { name: 'Send a test delivery' }).click();
      await page.locator('#test-result .badge-delivered').waitFor();
      expect(gateway.requests).toHaveLength(2);
      expect(gateway.requests[1]!.headers['x-gateway-key']).toBe(gatewayKey);
    } finally {
      await gateway.close();
    }
  });

  it('registers an endpoint for the operational events with a content filter; a bad filter is refused next to its field', async () => {
    await visit(page, '/console/endpoints/new');
    await page.getByLabel('URL').fill(receiver.url);
    await page.getByLabel('All endpoint.* events').check();
    await page.getByLabel('delivery.failed').check();
    await page.getByLabel('Filter (optional)').fill('{"path": "data.endpoint.description", "eq": ');
    await page.getByRole('button', { name: 'Register endpoint' }).click();
    expect(await page.locator('#field-filter-error').innerText()).toContain('is not JSON');
    await page.getByLabel('Filter (optional)').fill('{"path": "data..endpoint", "eq": "sandbox"}');
    await page.getByRole('button', { name: 'Register endpoint' }).click();
    expect(await page.locator('#field-filter-error').innerText()).toContain('filter.path');
    expect(await accessibilityProblems(page)).toEqual([]);

    await page.getByLabel('Filter (optional)').fill('{"not": {"path": "data.endpoint.description", "eq": "sandbox"}}');
    await page.getByRole('button', { name: 'Register endpoint' }).click();
    await page.getByRole('link', { name: 'Go to the endpoint' }).click();
    const summary = await page.locator('.summary').innerText();
    expect(summary).toContain('delivery.failed, endpoint.*');
    expect(summary).toContain('"eq": "sandbox"');

    // Tried on the company's latest event of a type: no endpoint was disabled yet; the employee.updated delivery failed
    // in an earlier step, which raised a delivery.failed.
    await page.getByLabel('Event type').selectOption('endpoint.disabled');
    await page.getByRole('button', { name: 'Test the filter' }).click();
    expect(await page.locator('#filter-test').innerText()).toContain('has no endpoint.disabled event yet');
    await page.getByLabel('Event type').selectOption('delivery.failed');
    await page.getByRole('button', { name: 'Test the filter' }).click();
    expect(await page.locator('#filter-test').innerText()).toContain('would be sent');
    expect(await accessibilityProblems(page)).toEqual([]);
    await screenshot(page, 'endpoint-filter');

    // The edit form holds the filter as saved; emptied, the endpoint has none.
    await page.getByRole('link', { name: 'Edit' }).click();
    expect(JSON.parse(await page.inputValue('#field-filter'))).toEqual({ not: { path: 'data.endpoint.description', eq: 'sandbox' } });
    await page.getByLabel('Filter (optional)').fill('');
    await page.getByRole('button', { name: 'Save changes' }).click();
    expect(await page.locator('.summary').innerText()).toContain('none: every event chosen');
  });

  it('registers an endpoint with a transformation; a bad expression is refused next to its field, and "try it" shows what would be sent', async () => {
    await visit(page, '/console/endpoints/new');
    await page.getByLabel('URL').fill(receiver.url);
    await page.getByLabel('delivery.failed').check();
    await page.locator('#field-transformation_body').fill('{"alert": data.delivery_id,}');
    await page.locator('#field-transformation_headers').fill('X-Webhook-Mine: "x"');
    await page.getByRole('button', { name: 'Register endpoint' }).click();
    expect(await page.locator('#field-transformation_body-error').innerText()).toContain('does not parse');
    await page.locator('#field-transformation_body').fill('{"alert": data.delivery_id, "error": data.last_error}');
    await page.getByRole('button', { name: 'Register endpoint' }).click();
    expect(await page.locator('#field-transformation_headers-error').innerText()).toContain('is reserved');
    expect(await accessibilityProblems(page)).toEqual([]);

    await page.locator('#field-transformation_headers').fill('X-Alert-Kind: event_type');
    await page.locator('#field-transformation_path').fill('"/alerts/" & data.delivery_id');
    await page.getByRole('button', { name: 'Register endpoint' }).click();
    await page.getByRole('link', { name: 'Go to the endpoint' }).click();
    expect(await page.locator('.summary').innerText()).toContain('"/alerts/" & data.delivery_id');

    // Tried on the company's latest delivery.failed (an earlier step's delivery failed).
    await page.locator('#transformation-test-type').selectOption('delivery.failed');
    await page.getByRole('button', { name: 'Try it' }).click();
    const tried = await page.locator('#transformation-test').innerText();
    expect(tried).toContain('would be sent to');
    expect(tried).toContain('/alerts/');
    expect(tried).toContain('X-Alert-Kind: delivery.failed');
    expect(tried).toContain('"alert"');
    expect(await accessibilityProblems(page)).toEqual([]);
    await screenshot(page, 'endpoint-transformation');

    // The edit form holds it as saved; its body emptied with the rest, the endpoint has none.
    await page.getByRole('link', { name: 'Edit' }).click();
    expect(await page.inputValue('#field-transformation_headers')).toBe('X-Alert-Kind: event_type');
    for (const id of ['#field-transformation_body', '#field-transformation_headers', '#field-transformation_path']) await page.locator(id).fill('');
    await page.getByRole('button', { name: 'Save changes' }).click();
    expect(await page.locator('.summary').innerText()).toContain("none: the event's envelope as it is");
  });

  it("registers a feed, without a URL, and shows its position and its subscriber's lag", async () => {
    await visit(page, '/console/endpoints/new');
    await page.getByLabel('Feed: kept for its subscriber').check();
    await page.getByLabel('Description (optional)').fill('On-premises payroll');
    await page.getByLabel('All employee.* events').check();
    await page.getByRole('button', { name: 'Register endpoint' }).click();
    expect(await page.locator('h1').innerText()).toBe('Event feed');
    expect(await page.content()).toContain('The feed is registered');
    const feedId = new URL(page.url()).pathname.split('/').pop()!;
    expect(await page.locator('.summary').innerText()).toMatch(/Not yet acknowledged\s+none/);

    const created = await sendInbound(stack.baseUrl, key, envelope('employee.created', { emp_number: 'E-200', name: 'Lee Park', email: 'lee@acme.example', employee_type: 'site_worker' }));
    expect(created.status).toBe(200);
    await waitFor(async () => {
      await visit(page, `/console/endpoints/${feedId}`);
      return /Not yet acknowledged\s+1 event, the oldest written/.test(await page.locator('.summary').innerText());
    }, 30_000, 'the event in the feed');
    expect(await page.locator('.summary').innerText()).toContain(`GET /api/v1/webhook-endpoints/${feedId}/feed`);
    await screenshot(page, 'feed');

    // The delivery log shows the feed's lag beside the deliveries.
    await visit(page, '/console/deliveries');
    const lag = await page.locator('tr', { hasText: 'On-premises payroll' }).innerText();
    expect(lag.split('\t').slice(1, 3)).toEqual(['1', '1']);
    expect(await accessibilityProblems(page)).toEqual([]);
  });

  it('revokes the key after confirmation; the next request with it answers 401', async () => {
    await visit(page, '/console/api-keys');
    await page.getByRole('link', { name: 'Revoke ERP sync' }).click();
    expect(await page.locator('h1').innerText()).toBe('Revoke the API key “ERP sync”?');
    await screenshot(page, 'api-key-revoke');
    await page.getByRole('button', { name: 'Revoke key' }).click();
    expect(await page.locator('.flash').innerText()).toContain('revoked');
    expect(await page.locator('tr', { hasText: 'ERP sync' }).innerText()).toContain('revoked');
    expect((await sendInbound(stack.baseUrl, key, envelope('test.connection', {}))).status).toBe(401);
  });

  it('a viewer, added by the admin, is offered no write action and has none accepted', async () => {
    await visit(page, '/console/users');
    await page.getByRole('link', { name: 'Add a user' }).click();
    await page.getByLabel('Email').fill('victor@acme.example');
    await page.getByLabel('Name').fill('Victor Viewer');
    await page.getByLabel(/^viewer/).check();
    await page.getByRole('button', { name: 'Add user' }).click();
    const password = await page.inputValue('#user-password');
    await screenshot(page, 'user-added');
    await visit(page, '/console/users');
    await screenshot(page, 'users');

    const viewerContext = await newContext();
    const viewer = await viewerContext.newPage();
    await viewer.goto(`${stack.baseUrl}/console/login`);
    await viewer.getByLabel('Email').fill('victor@acme.example');
    await viewer.getByLabel('Password').fill(password);
    await viewer.getByRole('button', { name: 'Sign in' }).click();
    await viewer.waitForURL('**/console/api-keys');
    expect(await viewer.getByRole('link', { name: 'Users' }).count()).toBe(0);

    const [deliveryId] = await deliveriesOfEvent('employee.created');
    const readable = ['/console/api-keys', '/console/endpoints', `/console/endpoints/${endpoint.id}`, '/console/deliveries', `/console/deliveries/${deliveryId}`, '/console/alerts'];
    for (const path of readable) {
      expect((await visit(viewer, path))?.status()).toBe(200);
      expect(await writeActions(viewer)).toEqual({ posts: ['/console/logout'], links: [] });
    }
    await visit(viewer, `/console/endpoints/${endpoint.id}`);
    await screenshot(viewer, 'viewer-endpoint');

    const csrf = await viewer.inputValue('form[action="/console/logout"] input[name="_csrf"]');
    const counts = async () => (await stack.em().execute<{ keys: string; deliveries: string; users: string }[]>(
      'select (select count(*) from api_keys) as keys, (select count(*) from webhook_deliveries) as deliveries, (select count(*) from console_users) as users',
    ))[0];
    const before = await counts();
    const refused = [
      ['/console/api-keys', { name: 'Viewer key', scopes: 'admin' }],
      [`/console/endpoints/${endpoint.id}/test`, {}],
      [`/console/endpoints/${endpoint.id}/delete`, {}],
      [`/console/deliveries/${deliveryId}/resend`, {}],
      ['/console/users', { email: 'mallory@acme.example', name: 'Mallory', role: 'admin' }],
    ] as const;
    for (const [path, form] of refused) {
      const response = await viewerContext.request.post(`${stack.baseUrl}${path}`, { form: { _csrf: csrf, ...form }, maxRedirects: 0 });
      expect(response.status()).toBe(403);
      expect(await response.text()).toContain('Your role (viewer) can view but not change anything');
    }
    expect((await viewer.goto(`${stack.baseUrl}/console/users`))?.status()).toBe(403);
    expect(await counts()).toEqual(before);
    await viewerContext.close();
  });

  it('refuses a form sent without its CSRF token, changing nothing', async () => {
    await visit(page, '/console/api-keys/new');
    await page.getByLabel('Name').fill('No token');
    await page.check('input[value="admin"]');
    await page.locator('main input[name="_csrf"]').evaluate((input) => input.remove());
    const [response] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByRole('button', { name: 'Create key' }).click()]);
    expect(response.status()).toBe(403);
    expect(await page.locator('main').innerText()).toContain('did not carry a valid security token, so nothing was changed');
    await screenshot(page, 'csrf-refused');
    const [row] = await stack.em().execute<{ n: string }[]>(`select count(*) as n from api_keys where name = 'No token'`);
    expect(Number(row!.n)).toBe(0);
  });

  it('limits wrong-password attempts without telling whether the email exists', async () => {
    const context = await newContext();
    const login = await context.newPage();
    const attempt = async (email: string, password: string) => {
      await login.goto(`${stack.baseUrl}/console/login`);
      await login.getByLabel('Email').fill(email);
      await login.getByLabel('Password').fill(password);
      const [response] = await Promise.all([login.waitForResponse((r) => r.request().method() === 'POST'), login.getByRole('button', { name: 'Sign in' }).click()]);
      return { status: response.status(), message: await login.locator('#error-summary p').innerText() };
    };
    for (let i = 0; i < 5; i++) {
      expect(await attempt(credentials.email, `wrong password ${i}`)).toEqual({ status: 401, message: 'The email or password is not correct.' });
      expect(await attempt('nobody@acme.example', `wrong password ${i}`)).toEqual({ status: 401, message: 'The email or password is not correct.' });
    }
    const limited = { status: 429, message: 'Too many sign-in attempts. Try again in 15 minutes.' };
    expect(await attempt(credentials.email, credentials.password)).toEqual(limited);
    expect(await attempt('nobody@acme.example', 'wrong password')).toEqual(limited);
    await screenshot(login, 'sign-in-limited');
    await context.close();
  });
});
