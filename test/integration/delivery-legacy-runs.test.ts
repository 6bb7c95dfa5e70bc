import type { EntityManager } from '@mikro-orm/postgresql';
import { bundleWorkflowCode } from '@temporalio/worker';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { WebhookDelivery } from '../../src/domain/webhooks/webhook-delivery.entity';
import { createLogger } from '../../src/logger';
import { COMPANY_ID, DELIVERY_STATUS, ENDPOINT_ID, EVENT_TYPE } from '../../src/temporal/search-attributes';
import { deliveryWorkflowId } from '../../src/webhooks/delivery-workflows';
import { type RunningWorker, startWorker } from '../../src/worker/worker';
import { historyOf, replayWithCurrentCode } from '../helpers/delivery-runs';
import { startReceiver, type TestReceiver } from '../helpers/https-receiver';
import { freePort } from '../helpers/ports';
import { createTenant, request, startStack, testConfig, type TestStack } from '../helpers/stack';
import { testCertificate } from '../helpers/https-receiver';
import { registerEndpoint, verifiedAsReceiver, waitForDeliveryStatus } from '../helpers/webhooks';

/**
 * A delivery begun by the previous version of the workflow (the rerun signal, attempts numbered by its input)
 * and still open when the new version is deployed: its history replays with the new code, and REST re-runs it.
 */
describe('a delivery run begun before the delivery workflow read the database', () => {
  let stack: TestStack;
  let previous: RunningWorker;
  let current: RunningWorker | null = null;
  let hook: TestReceiver | null = null;

  beforeAll(async () => {
    stack = await startStack({ worker: false, dispatcher: false, config: await testConfig({ WEBHOOK_TIMEOUT_MS: '1500' }) });
    const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('../helpers/legacy-delivery-workflow'), logger: quiet });
    const bundlePath = path.join(process.env.TEST_DATA_DIR!, `legacy-bundle-${process.pid}.js`);
    writeFileSync(bundlePath, code);
    previous = await startWorker({ config: stack.config, orm: stack.orm, logger: createLogger('silent'), workflowBundlePath: bundlePath, webhookCa: testCertificate().cert });
  }, 120_000);
  afterAll(async () => {
    await hook?.close();
    await current?.close();
    await previous?.close();
    await stack.close();
  });

  it('replays with the new code, and is re-run through REST with the rerun signal, keeping its X-Webhook-ID', async () => {
    const tenant = await createTenant(stack.orm, ['admin']);
    const port = await freePort();
    const endpoint = await registerEndpoint(stack, tenant.key, { url: `https://localhost:${port}/hook`, event_types: ['employee.created'] });
    const em = stack.em() as EntityManager;
    const delivery = em.create(WebhookDelivery, { company: tenant.companyId, endpoint: endpoint.id, eventType: 'employee.created', payload: '{"event_type":"employee.created"}' });
    await em.flush();

    // Started as the previous dispatcher did.
    const workflowId = deliveryWorkflowId(delivery.id);
    await stack.temporal.workflow.start('webhookDelivery', {
      taskQueue: stack.config.temporal.taskQueue,
      workflowId,
      args: [{ deliveryId: delivery.id, retryDelaysMs: [200, 200, 200, 200, 200], firstAttemptNumber: 0, trigger: 'automatic' }],
      typedSearchAttributes: [
        { key: COMPANY_ID, value: tenant.companyId },
        { key: ENDPOINT_ID, value: endpoint.id },
        { key: EVENT_TYPE, value: 'employee.created' },
        { key: DELIVERY_STATUS, value: 'pending' },
      ],
    });
    expect((await waitForDeliveryStatus(stack, tenant.key, delivery.id, ['failed'])).attempt_count).toBe(6);

    // The new version of the code takes over the open run.
    const events = await historyOf(stack, delivery.id);
    await replayWithCurrentCode([{ workflowId, events }]);
    await previous.close();
    current = await startWorker({ config: stack.config, orm: stack.orm, logger: createLogger('silent'), workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH, webhookCa: testCertificate().cert });
    const before = await stack.em().execute('select * from webhook_delivery_attempts where delivery_id = ? order by attempt_number', [delivery.id]);

    hook = await startReceiver({ port });
    const retried = await request(stack.baseUrl, 'POST', `/api/v1/webhook-deliveries/${delivery.id}/retry`, { key: tenant.key, body: { reason: 'after the upgrade' } });
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ status: 'delivered', attempt_count: 7 });
    const [rerun] = await hook.waitForRequests(1);
    expect(rerun!.headers['x-webhook-id']).toBe(delivery.id);
    expect(rerun!.headers['x-webhook-retry']).toBe('6');
    expect(verifiedAsReceiver(endpoint.secret, rerun!)).toBe(true);

    const after = await stack.em().execute('select * from webhook_delivery_attempts where delivery_id = ? order by attempt_number', [delivery.id]);
    expect(after.slice(0, 6)).toEqual(before);
    const alerts = await request(stack.baseUrl, 'GET', '/api/v1/webhook-alerts?status=resolved', { key: tenant.key });
    expect(alerts.body.data).toContainEqual(expect.objectContaining({ delivery_id: delivery.id }));
    const result = await stack.temporal.workflow.getHandle(workflowId).result();
    expect(result).toEqual({ status: 'delivered', attempts: 7 });
  });
});

const noop = () => undefined;
const quiet = { trace: noop, debug: noop, info: noop, warn: noop, error: console.error, log: noop };
