import { mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Browser, type Locator, type Page } from 'playwright-core';
import { PROJECT_ROOT } from '../../src/paths';
import { type DevServer, startTemporalDevServer } from '../../src/temporal/dev-server';
import { installTemporalRuntime } from '../../src/temporal/runtime';
import { deliveryWorkflowId } from '../../workflows/webhook-delivery.contract';
import { describeInBrowser, launchChromium } from '../helpers/chromium';
import { startReceiver, type TestReceiver } from '../helpers/https-receiver';
import { freePort } from '../helpers/ports';
import { waitFor } from '../helpers/processes';
import { createTenant, envelope, sendInbound, startStack, testConfig, type TestStack } from '../helpers/stack';
import { addApiKey, deliveryIdsOf, registerEndpoint, verifiedAsReceiver, waitForDeliveryStatus } from '../helpers/webhooks';

/** UPDATE_SCREENSHOTS=1 writes the pictures of docs/operations.md; otherwise they go to a temporary folder. */
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS ? path.join(PROJECT_ROOT, 'docs/screenshots') : mkdtempSync(path.join(os.tmpdir(), 'ui-screenshots-'));

/**
 * What an operator sees in the Temporal UI (the one the dev server serves, of this file's own Temporal) when a
 * delivery has failed, driven in headless Chromium: the failure and its reason without any setup, and a re-run
 * through the UI's own controls.
 */
describeInBrowser('a failed delivery in the Temporal UI', () => {
  let temporal: DevServer;
  let stack: TestStack;
  let browser: Browser;
  let hook: TestReceiver;

  beforeAll(async () => {
    // Before the dev server: starting it would create the SDK runtime with its defaults.
    installTemporalRuntime(process.env.LOG_LEVEL ?? 'silent');
    temporal = await startTemporalDevServer({ namespace: 'default', uiPort: await freePort() });
    stack = await startStack({ config: await testConfig({ TEMPORAL_ADDRESS: temporal.address, WEBHOOK_TIMEOUT_MS: '1500' }) });
    hook = await startReceiver();
    browser = await launchChromium();
    mkdirSync(SCREENSHOTS, { recursive: true });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await hook?.close();
    await stack?.close();
    await temporal?.stop();
  });

  /** Visibility lags a little behind the workflow, and the UI loads its lists after the page: poll with reloads. */
  const visibleWithin = (locator: Locator, ms: number) => locator.waitFor({ timeout: ms }).then(() => true, () => false);
  const shoot = (page: Page, name: string) => page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });

  it('shows that it failed and why, and re-runs it with the rerun update', async () => {
    const sender = await createTenant(stack.orm, ['admin']);
    const subscriber = await addApiKey(stack, sender);
    hook.respondWith(() => ({ status: 503, body: '{"error":"database maintenance"}', headers: { 'Content-Type': 'application/json' } }));
    const endpoint = await registerEndpoint(stack, subscriber.key, { url: hook.url, event_types: ['employee.created'] });
    const sent = await sendInbound(stack.baseUrl, sender, envelope('employee.created', { emp_number: 'E-1', name: 'Dana Builder', email: 'dana@example.com', employee_type: 'site_worker' }));
    const [deliveryId] = await waitFor(async () => {
      const ids = await deliveryIdsOf(stack, endpoint.id);
      return ids.length ? ids : null;
    });
    expect((await waitForDeliveryStatus(stack, subscriber.key, deliveryId!, ['failed'])).attempt_count).toBe(6);
    const workflowId = deliveryWorkflowId(deliveryId!);

    // The operator's "open failed" query, by the event id the subscriber reported.
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const query = `EventId = "${sent.body.event_id}" AND ExecutionStatus = "Running" AND DeliveryStatus = "failed"`;
    await waitFor(async () => {
      await page.goto(`${temporal.uiUrl}/namespaces/default/workflows?query=${encodeURIComponent(query)}`);
      return visibleWithin(page.getByRole('link', { name: workflowId }).first(), 5_000);
    }, 60_000, 'the delivery in the filtered workflow list');
    await shoot(page, 'open-failed-deliveries');

    // Every run of the delivery: the one that used up its attempts is red, without any column set up.
    await page.goto(`${temporal.uiUrl}/namespaces/default/workflows?query=${encodeURIComponent(`WorkflowId = "${workflowId}"`)}`);
    const failedRow = page.getByRole('row').filter({ hasText: 'Failed' }).filter({ hasText: workflowId });
    await failedRow.waitFor({ timeout: 30_000 });
    await shoot(page, 'delivery-runs');

    // The failed run: its status, and the reason in the failure: the status code, the error text, the response.
    await failedRow.getByRole('link').last().click();
    await page.getByText('Delivery Failed after 6 attempt(s)', { exact: false }).first().waitFor({ timeout: 30_000 });
    const failedPage = await page.locator('main').innerText();
    expect(failedPage).toContain('Failed');
    expect(failedPage).toContain('HTTP 503');
    expect(failedPage).toContain('database maintenance');
    // Each attempt is a failed activity with its summary on the timeline.
    expect(failedPage).toContain('Attempt 6 (X-Webhook-Retry 5, automatic)');
    await shoot(page, 'delivery-failed');

    // The run that waits for the re-run; its timeline says why it waits.
    await page.getByRole('link', { name: /^[0-9a-f-]{36}$/ }).filter({ hasNotText: 'webhook' }).last().click();
    await page.getByText('Failed after 6 attempt(s) (HTTP 503)', { exact: false }).first().waitFor({ timeout: 30_000 });
    await shoot(page, 'delivery-waiting-for-rerun');

    // More Actions → Send an Update: a wrong input is refused by the validator, and nothing is sent.
    await page.getByRole('button', { name: 'More Actions' }).first().click();
    await page.getByRole('menuitem', { name: 'Send an Update' }).click();
    const dialog = page.locator('dialog[open][data-testid=update-confirmation-modal]');
    await dialog.getByTestId('update-select-button').click();
    await dialog.getByRole('option', { name: /^rerun/ }).click();
    const data = dialog.locator('.cm-content');
    await data.click();
    await page.keyboard.type('{"reasn": "typo"}');
    await dialog.getByTestId('confirm-modal-button').click();
    await page.getByText('Unknown field "reasn"', { exact: false }).first().waitFor({ timeout: 30_000 });
    await shoot(page, 'rerun-update-refused');
    expect(hook.requests).toHaveLength(6);

    // The receiver is back; the right input re-runs the delivery, keeping its X-Webhook-ID.
    hook.respondWith(() => ({ status: 200, body: '{"received":true}' }));
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'More Actions' }).first().click();
    await page.getByRole('menuitem', { name: 'Send an Update' }).click();
    await dialog.getByTestId('update-select-button').click();
    await dialog.getByRole('option', { name: /^rerun/ }).click();
    await dialog.locator('.cm-content').click();
    await page.keyboard.type('{"reason": "receiver fixed"}');
    await shoot(page, 'rerun-update');
    await dialog.getByTestId('confirm-modal-button').click();

    const [rerun] = (await hook.waitForRequests(7)).slice(6);
    expect(rerun!.headers['x-webhook-id']).toBe(deliveryId);
    expect(rerun!.headers['x-webhook-retry']).toBe('6');
    expect(verifiedAsReceiver(endpoint.secret, rerun!)).toBe(true);
    await waitForDeliveryStatus(stack, subscriber.key, deliveryId!, ['delivered']);
    await waitFor(async () => {
      await page.reload();
      return visibleWithin(page.getByText('Completed').first(), 5_000);
    }, 30_000, 'the run to show as completed');
    await shoot(page, 'delivery-rerun-completed');
    await page.close();
  }, 180_000);
});
