import type { MikroORM } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { type RunningApi, startApi } from '../../src/api/server';
import { type Config, loadConfig } from '../../src/config';
import { SecretBox } from '../../src/crypto/secret-box';
import { signWebhook } from '../../src/crypto/webhook-signature';
import { connectOrm } from '../../src/database';
import type { Orm } from '../../src/db/orm';
import { createCompany, issueApiKey } from '../../src/domain/accounts/api-keys-service';
import { type OutboxDispatcher, startOutboxDispatcher } from '../../src/delivery/outbox/dispatcher';
import { createLogger } from '../../src/logger';
import { connectTemporalClient } from '../../src/temporal/connection';
import { installTemporalRuntime } from '../../src/temporal/runtime';
import { temporalDeliveryWorkflows } from '../../src/temporal/temporal-delivery-workflows';
import { type RunningWorker, startWorker } from '../../src/worker/worker';
import { eventDataProblems } from './event-contract';
import { testCertificate } from './https-receiver';
import { eventDefinition } from '../../src/events/registry';

/**
 * One test file's service: a real API on a free port, a Temporal client, and (unless asked not to) an
 * in-process worker on a task queue of its own, so files running in parallel never take each other's tasks.
 */
export interface TestStack {
  config: Config;
  orm: Orm;
  temporal: Client;
  api: RunningApi;
  worker: RunningWorker | null;
  dispatcher: OutboxDispatcher | null;
  baseUrl: string;
  em(): EntityManager;
  close(): Promise<void>;
}

/**
 * A database of the test's own, copied from the migrated one global setup made (CREATE DATABASE … TEMPLATE
 * takes milliseconds): each file's dispatcher sees only its own events. Dropped by global teardown.
 */
export async function createTestDatabase(): Promise<string> {
  const template = new URL(process.env.DATABASE_URL!);
  const name = `${process.env.TEST_RUN_ID}_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const admin = new PgClient({ connectionString: Object.assign(new URL(template), { pathname: '/postgres' }).toString() });
  await admin.connect();
  try {
    await admin.query(`create database "${name}" template "${template.pathname.slice(1)}"`);
  } finally {
    await admin.end();
  }
  return Object.assign(new URL(template), { pathname: `/${name}` }).toString();
}

/**
 * Task queues of a test stack's own, and no draining of a queue of older versions (a test that needs one names its
 * own): files running side by side never take each other's tasks or schedules.
 */
function testTaskQueues(): Record<string, string> {
  const id = randomUUID();
  return { TEMPORAL_OPERATIONS_TASK_QUEUE: `test-operations-${id}`, TEMPORAL_DELIVERIES_TASK_QUEUE: `test-deliveries-${id}`, TEMPORAL_DRAIN_TASK_QUEUE: '' };
}

/** The settings that put another process (a worker, the CLI) on the stack's task queues. */
export const taskQueueEnvOf = (config: Config): Record<string, string> => ({
  TEMPORAL_OPERATIONS_TASK_QUEUE: config.temporal.taskQueues.operations,
  TEMPORAL_DELIVERIES_TASK_QUEUE: config.temporal.taskQueues.deliveries,
  TEMPORAL_DRAIN_TASK_QUEUE: config.temporal.drainTaskQueue ?? '',
});

/**
 * Settings of one test stack: its own database and task queues, subscriber endpoints on loopback allowed,
 * and a retry schedule of fractions of a second instead of the spec's hours.
 */
export async function testConfig(overrides: Record<string, string> = {}): Promise<Config> {
  return loadConfig({
    ...process.env,
    DATABASE_URL: await createTestDatabase(),
    PORT: '0',
    HOST: '127.0.0.1',
    ...testTaskQueues(),
    WEBHOOK_ALLOW_LOOPBACK: 'true',
    WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2,0.2,0.2',
    WEBHOOK_TIMEOUT_MS: '5000',
    OUTBOX_POLL_MS: '250',
    WORKER_METRICS_PORT: '0',
    ...overrides,
  });
}

/** Worker and outbox dispatcher run unless `worker: false`; `dispatcher` can be turned off on its own. */
export async function startStack(options: { worker?: boolean; dispatcher?: boolean; config?: Config } = {}): Promise<TestStack> {
  const config = options.config ?? (await testConfig());
  const logger = createLogger(config.logLevel);
  installTemporalRuntime(config.logLevel);
  const orm = await connectOrm(config.databaseUrl, 5);
  const temporal = await connectTemporalClient(config.temporal);
  const api = await startApi({ config, orm, temporal, logger });
  const worker =
    options.worker === false
      ? null
      : await startWorker({ config, orm, logger, workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH, webhookCa: testCertificate().cert });
  const dispatcher = (options.dispatcher ?? options.worker !== false) ? await startOutboxDispatcher({ config, orm, deliveryWorkflows: temporalDeliveryWorkflows(temporal, config.temporal.taskQueues), logger, metrics: worker?.metrics }) : null;
  return {
    config,
    orm,
    temporal,
    api,
    worker,
    dispatcher,
    baseUrl: `http://127.0.0.1:${api.port}`,
    em: () => orm.em.fork() as EntityManager,
    async close() {
      await api.close();
      await dispatcher?.stop();
      await worker?.close();
      await temporal.connection.close();
      try {
        await assertOutboxMatchesEventSchemas(orm);
      } finally {
        await orm.close();
      }
    },
  };
}

/**
 * The event contract, checked on everything a test file made happen: every outbox event's data (shape A)
 * and catalog data (shape B) has exactly the keys and types of its schema in schemas/events/.
 */
async function assertOutboxMatchesEventSchemas(orm: Orm): Promise<void> {
  const events = await orm.em
    .fork()
    .getConnection()
    .execute<{ id: string; event_type: string; data: Record<string, unknown> | null; catalog_data: Record<string, unknown> | null }[]>(
      'select id, event_type, data, catalog_data from outbox_events',
    );
  const problems: string[] = [];
  for (const event of events) {
    const definition = eventDefinition(event.event_type);
    const shapes = [
      ['a', definition.shapeA, event.data],
      ['b', definition.shapeB, event.catalog_data],
    ] as const;
    for (const [shape, name, data] of shapes) {
      if (name && data) problems.push(...eventDataProblems(shape, name, data).map((p) => `${shape.toUpperCase()} ${name} ${event.id}: ${p}`));
    }
  }
  if (problems.length) throw new Error(`Emitted events that differ from schemas/events/:\n${problems.slice(0, 20).join('\n')}`);
}

/**
 * Environment of a worker or API running as its own process against the stack's database and task queue. Its
 * metrics on a port of its own: workers of test files running side by side would otherwise both take 9464, and
 * the later one would exit.
 */
export const processEnvOf = (stack: TestStack): Record<string, string> => ({
  DATABASE_URL: stack.config.databaseUrl,
  TEMPORAL_ADDRESS: stack.config.temporal.address,
  ...taskQueueEnvOf(stack.config),
  WORKFLOW_BUNDLE_PATH: process.env.WORKFLOW_BUNDLE_PATH!,
  WORKER_METRICS_PORT: '0',
  LOG_LEVEL: 'info',
});

export interface Tenant {
  companyId: string;
  apiKeyId: string;
  key: string;
  signingSecret: string;
}

/** A new API key of the company, holding `scopes`. */
export async function issueTestKey(orm: MikroORM | Orm, companyId: string, scopes: string[]): Promise<Tenant> {
  const issued = await issueApiKey(orm.em.fork() as EntityManager, new SecretBox(loadConfig().encryptionKey), { companyId, name: 'test key', scopes });
  return { companyId, apiKeyId: issued.apiKey.id, key: issued.key, signingSecret: issued.signingSecret };
}

/** A new company with one API key holding `scopes`. */
export async function createTenant(orm: MikroORM | Orm, scopes: string[] = ['admin'], name = `Company ${randomUUID().slice(0, 8)}`): Promise<Tenant> {
  const company = await createCompany(orm.em.fork() as EntityManager, name);
  return issueTestKey(orm, company.id, scopes);
}

export interface JsonResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export async function request<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<JsonResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers['X-API-Key'] = options.key;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['Content-Type'] ??= 'application/json';
  }
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

/** POST /webhooks/inbound signed the way the README tells senders to. */
export async function sendInbound<T = any>(
  baseUrl: string,
  tenant: Tenant,
  envelope: unknown,
  options: { timestamp?: number; secret?: string; source?: string; signature?: string } = {},
): Promise<JsonResponse<T>> {
  const rawBody = JSON.stringify(envelope);
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'X-Webhook-Timestamp': timestamp,
    'X-Webhook-Signature': options.signature ?? signWebhook(options.secret ?? tenant.signingSecret, timestamp, rawBody),
  };
  if (options.source !== undefined) headers['X-Webhook-Source'] = options.source;
  return request<T>(baseUrl, 'POST', '/webhooks/inbound', { key: tenant.key, rawBody, headers });
}

export const envelope = (eventType: string, data?: Record<string, unknown>) => ({
  event_type: eventType,
  timestamp: new Date().toISOString(),
  source: 'test-suite',
  ...(data ? { data } : {}),
});
