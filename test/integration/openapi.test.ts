import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRouters } from '../../src/api/app';
import type { AppDeps } from '../../src/api/context';
import { documentedRoutes } from '../../src/api/openapi';
import { INBOUND_OPERATIONS } from '../../src/api/routes/inbound/operations';
import { SecretBox } from '../../src/crypto/secret-box';
import { ApiKeyCache } from '../../src/domain/accounts/api-key-cache';
import { FeedWaits } from '../../src/delivery/feeds/feed-waits';
import { createApiMetrics } from '../../src/metrics';
import { createLogger } from '../../src/logger';
import { PROJECT_ROOT } from '../../src/paths';
import { SchemaValidator } from '../../src/schemas/schema-validator';
import { temporalDeliveryWorkflows } from '../../src/temporal/temporal-delivery-workflows';
import { temporalWorkflows } from '../../src/temporal/temporal-workflows';
import { createTenant, request, startStack, type TestStack } from '../helpers/stack';

describe('GET /api/v1/openapi.json', () => {
  let stack: TestStack;
  let document: any;

  beforeAll(async () => {
    stack = await startStack({ worker: false });
    const response = await request(stack.baseUrl, 'GET', '/api/v1/openapi.json');
    expect(response.status).toBe(200);
    document = response.body;
  });
  afterAll(() => stack.close());

  it('is served without an API key and validates as OpenAPI 3.1', () => {
    expect(document.openapi).toBe('3.1.0');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'openapi-'));
    try {
      const file = path.join(dir, 'openapi.json');
      writeFileSync(file, JSON.stringify(document));
      // The validator is an ES module, which Jest's sandbox cannot load; its own CLI runs it.
      const run = spawnSync(process.execPath, [path.join(PROJECT_ROOT, 'node_modules/@seriousme/openapi-schema-validator/bin/validate-api-cli.js'), file], {
        encoding: 'utf8',
      });
      expect(JSON.parse(run.stdout)).toEqual({ valid: true });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('documents every route the service serves', () => {
    const secretBox = new SecretBox(stack.config.encryptionKey);
    const deps: AppDeps = {
      config: stack.config,
      orm: stack.orm,
      temporal: stack.temporal,
      workflows: temporalWorkflows(stack.temporal, stack.config.temporal.taskQueues),
      deliveryWorkflows: temporalDeliveryWorkflows(stack.temporal, stack.config.temporal.taskQueues),
      secretBox,
      apiKeys: new ApiKeyCache({ databaseUrl: stack.config.databaseUrl, secretBox, logger: createLogger('silent') }),
      feedWaits: new FeedWaits({ databaseUrl: stack.config.databaseUrl, logger: createLogger('silent') }),
      validator: new SchemaValidator(),
      logger: createLogger('silent'),
      metrics: createApiMetrics(stack.orm),
    };
    const served = Object.values(createRouters(deps)).flatMap((router) =>
      router.stack.flatMap((layer) => layer.methods.filter((m) => m !== 'HEAD').map((method) => `${method} ${layer.path}`)),
    );
    expect(served.length).toBeGreaterThan(40);
    const documented = new Set(documentedRoutes(document));
    expect(served.filter((route) => !documented.has(route))).toEqual([]);
    expect(documented.size).toBe(new Set(served).size);
  });

  it('describes every inbound event_type as one variant of the request body, with its data schema', () => {
    const body = document.paths['/webhooks/inbound'].post.requestBody.content['application/json'].schema;
    expect(Object.keys(body.discriminator.mapping).sort()).toEqual(INBOUND_OPERATIONS.map((op) => op.eventType).sort());
    const variant = document.components.schemas['Inbound.vendor.updated'];
    expect(variant.properties.event_type).toEqual({ const: 'vendor.updated' });
    expect(variant.properties.data.$ref).toBe('#/components/schemas/VendorUpdatedInput');
  });

  it('describes all 71 outbound events and the 5 operational ones as webhooks, with their data schemas', () => {
    expect(Object.keys(document.webhooks)).toHaveLength(76);
    const failed = document.webhooks['delivery.failed'].post.requestBody.content['application/json'].schema;
    expect(failed.properties.data.$ref).toBe('#/components/schemas/DeliveryFailedData');
    expect(document.webhooks['endpoint.disabled'].post.description).toContain('Shape B endpoints receive this event in shape A');
    const created = document.webhooks['vendor.created'].post.requestBody.content['application/json'].schema;
    expect(created.required).toEqual(['event_id', 'event_type', 'timestamp', 'company_id', 'data']);
    expect(created.properties.data.$ref).toBe('#/components/schemas/VendorCreatedData');
    const catalog = document.webhooks['vendor.created (shape B)'].post.requestBody.content['application/json'].schema;
    expect(catalog.required).toEqual(['event', 'timestamp', 'data']);
    expect(document.webhooks['po.approved'].post.description).toContain('Shape A endpoints receive this event');
  });

  it('declares every path parameter of every operation', () => {
    const undeclared: string[] = [];
    for (const [path, operations] of Object.entries<Record<string, { parameters?: { name: string; in: string }[] }>>(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const declared = new Set((operation.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name));
        for (const [, name] of path.matchAll(/\{(\w+)\}/g)) if (!declared.has(name!)) undeclared.push(`${method.toUpperCase()} ${path}: ${name}`);
      }
    }
    expect(undeclared).toEqual([]);
  });

  it('documents list parameters, bodies and error responses of a collection', () => {
    const list = document.paths['/api/v1/vendors'].get;
    expect(list.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['limit', 'offset', 'after', 'updated_since', 'type', 'approval_status', 'trade_specialty', 'region']),
    );
    expect(list.responses['200'].content['application/json'].schema.properties.pagination.$ref).toBe('#/components/schemas/Pagination');
    // rest-api.md 2.3's limit, offset and total, and the cursor of the next page.
    expect(document.components.schemas.Pagination).toMatchObject({
      required: ['limit', 'offset', 'total', 'next_cursor'],
      properties: { next_cursor: { type: ['string', 'null'] } },
    });
    const create = document.paths['/api/v1/vendors'].post;
    expect(create.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/VendorCreate');
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '400', '401', '403', '409', '429', 'default']));
    expect(document.components.schemas.ErrorBody.required).toEqual(['error']);
  });

  it('states what the service checks in code, as the service checks it', async () => {
    const tenant = await createTenant(stack.orm, ['admin']);
    const schemas: any[] = Object.values(document.components.schemas);
    const find = (has: (schema: any) => boolean) => schemas.find(has);
    // Every subscription the document lists is accepted, and one it does not list is refused.
    const subscriptions: string[] = find((schema) => schema.items?.enum?.includes('project.*')).items.enum;
    expect(subscriptions).toEqual(expect.arrayContaining(['*', 'project.*', 'employee.created', 'workorder.created']));
    const register = (eventTypes: string[]) => request(stack.baseUrl, 'POST', '/api/v1/webhook-endpoints', { key: tenant.key, body: { url: 'https://127.0.0.1:9/hook', event_types: eventTypes } });
    expect((await register(subscriptions)).status).toBe(201);
    expect((await register(['spaceship.*'])).status).toBe(400);
    // The cron pattern agrees with the service on what it accepts and refuses.
    const cron = new RegExp(find((schema) => schema.description?.startsWith('When it runs: a cron expression')).pattern, 'u');
    for (const expression of ['0 6 * * 1', '*/15 0-23 1,15 1-12 0-6', ' 00 06 01 01 00 ', '60 * * * *', '* * * *', '0 6 * * 7', '0 6 0 * 1', '*/0 * * * *']) {
      const created = await request(stack.baseUrl, 'POST', '/api/v1/report-schedules', { key: tenant.key, body: { name: `Cron ${expression}`, report_type: 'open_work_orders_by_project', cron: expression } });
      expect({ expression, accepted: created.status === 201 }).toEqual({ expression, accepted: cron.test(expression) });
    }
    const withCurrencies = find((schema) => schema.properties?.currency?.enum);
    expect(withCurrencies.properties.currency.enum).toEqual(expect.arrayContaining(['USD', 'CAD', 'EUR']));
  });
});
