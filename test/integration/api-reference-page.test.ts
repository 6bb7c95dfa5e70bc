import { type Browser } from 'playwright-core';
import { describeInBrowser, launchChromium } from '../helpers/chromium';
import { startStack, type TestStack } from '../helpers/stack';

describeInBrowser('GET /docs', () => {
  let stack: TestStack;
  let browser: Browser;

  beforeAll(async () => {
    stack = await startStack({ worker: false });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('renders the reference from local assets only: routes, the inbound operations and the events', async () => {
    const page = await browser.newPage();
    const local = (url: string) => url.startsWith(stack.baseUrl) || url.startsWith('data:') || url.startsWith('blob:');
    const fetched: string[] = [];
    const blocked: string[] = [];
    page.on('requestfinished', (req) => {
      if (!local(req.url())) fetched.push(req.url());
    });
    page.on('requestfailed', (req) => {
      if (!local(req.url())) blocked.push(`${req.url()} ${req.failure()?.errorText}`);
    });
    const response = await page.goto(`${stack.baseUrl}/docs`);
    expect(response?.status()).toBe(200);
    // Redoc renders each operation as an h2 in its main panel (the side menu repeats the names). The reference of
    // every route (some 120 operations and 71 events) takes about 10 s on an idle machine, several times that on a busy one.
    await page.locator('h2', { hasText: 'List vendors' }).waitFor({ timeout: 90_000 });
    const text = await page.locator('body').innerText();
    expect(text).toContain('Construction integration service');
    expect(text).toContain('Create a customer');
    expect(text).toContain('Send an inbound operation');
    expect(text).toContain('customer.created');
    expect(text).toContain('workorder.created');
    expect(fetched).toEqual([]);
    // Redoc asks for its "powered by" logo on a CDN; the page's Content-Security-Policy refuses it.
    for (const attempt of blocked) expect(attempt).toMatch(/ csp$/);
    await page.close();
  }, 120_000);
});
