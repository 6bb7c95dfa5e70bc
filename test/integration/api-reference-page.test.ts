import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { startStack, type TestStack } from '../helpers/stack';

/** Debian's Chromium (.ci/run installs it); playwright-core cannot download browsers here. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

describe('GET /docs', () => {
  let stack: TestStack;
  let browser: Browser;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: install the chromium package (see .ci/run) or set CHROMIUM_PATH`);
    stack = await startStack({ worker: false });
    // Playwright gives the browser a fresh profile; the flags keep it off the network it cannot reach here.
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
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
