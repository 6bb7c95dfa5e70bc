/**
 * `npm run bench`: starts the whole service (`src/main.ts`, embedded PostgreSQL and Temporal dev server in a
 * temporary folder) as its own process, loads it from this one, and prints the figures:
 *   1. REST reads: GET /api/v1/projects?limit=50 (auth, rate limit, a page of 50 from 200 projects)
 *   2. Inbound writes: signed employee.created (auth, rate limit, signature, validation, one transaction)
 *   3. Outbound: time from an inbound change's 200 to its signed delivery arriving at an HTTPS subscriber
 * Rate limits are per key, so the load is spread over many keys of one company. BENCH_SECONDS sets the
 * length of each load phase (default 10).
 */
import autocannon from 'autocannon';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import { parseEncryptionKey } from '../src/config';
import { SecretBox } from '../src/crypto/secret-box';
import { signWebhook } from '../src/crypto/webhook-signature';
import { runningEmbeddedPostgresUrl } from '../src/db/embedded-postgres';
import { connectOrm } from '../src/db/orm';
import { createCompany, type IssuedApiKey, issueApiKey } from '../src/domain/accounts/api-keys-service';
import { customers } from '../src/domain/business/customers';
import { locations } from '../src/domain/business/locations';
import { createProject } from '../src/domain/work/projects';
import { localEncryptionKey } from '../src/local-environment';
import { PROJECT_ROOT } from '../src/paths';
import { startReceiver, testCertificate } from '../test/helpers/https-receiver';
import { freePort } from '../test/helpers/ports';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = 16;
const KEYS = 400;

async function startService(dataDir: string, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'src/main.ts')], {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      EMBEDDED_POSTGRES_PORT: String(await freePort()),
      TEMPORAL_DEV_PORT: String(await freePort()),
      TEMPORAL_UI_PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
      WEBHOOK_ALLOW_LOOPBACK: 'true',
      NODE_EXTRA_CA_CERTS: testCertificate().certFile,
      DB_POOL_MAX: '20',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('is running')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`service exited with ${code}`)));
  });
  return child;
}

function report(title: string, result: autocannon.Result): void {
  const ok = result['2xx'];
  console.log(
    `${title}\n  ${Math.round(ok / result.duration)} req/s served (2xx), ${result.non2xx} non-2xx, ${result.errors} errors, ${CONNECTIONS} connections\n` +
      `  latency ms: p50 ${result.latency.p50}, p90 ${result.latency.p90}, p99 ${result.latency.p99}, max ${result.latency.max}`,
  );
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function main() {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'construction-bench-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  console.log(`Starting the service (data in ${dataDir}) …`);
  const service = await startService(dataDir, port);
  const orm = await connectOrm(runningEmbeddedPostgresUrl(dataDir, 'construction')!, 4);
  const receiver = await startReceiver();
  try {
    const em = orm.em.fork();
    const secretBox = new SecretBox(parseEncryptionKey(localEncryptionKey(dataDir)));
    const company = await createCompany(em, 'Bench Construction');
    const keys: IssuedApiKey[] = [];
    for (let i = 0; i < KEYS; i++) keys.push(await issueApiKey(em, secretBox, { companyId: company.id, name: `bench ${i}`, scopes: ['admin'] }));
    const actor = { companyId: company.id, apiKeyId: keys[0]!.apiKey.id };
    const { record: customer } = await customers.findOrCreate(orm.em.fork(), actor, { name: 'Bench Customer' });
    const { record: location } = await locations.findOrCreate(orm.em.fork(), actor, { customer_id: customer.id, name: 'Bench Site' });
    for (let i = 0; i < 200; i++) {
      await createProject(
        orm.em.fork(),
        actor,
        { projectId: uuidv7(), project: { project_code: `B-${i}`, name: `Bench ${i}`, customer_id: customer.id, location_id: location.id } },
        uuidv7(),
      );
    }
    console.log(`Seeded ${KEYS} API keys and 200 projects. Each phase runs ${SECONDS} s.\n`);

    let next = 0;
    const rest = await autocannon({
      url: `${base}/api/v1/projects?limit=50`,
      connections: CONNECTIONS,
      duration: SECONDS,
      requests: [{ setupRequest: (req) => ({ ...req, headers: { 'X-API-Key': keys[next++ % KEYS]!.key } }) }],
    });
    report('1. REST read  GET /api/v1/projects?limit=50', rest);

    // Keys 1.. send inbound changes; key 0 owns nothing, so later deliveries are not suppressed as echoes.
    let emp = 0;
    const inbound = await autocannon({
      url: `${base}/webhooks/inbound`,
      method: 'POST',
      connections: CONNECTIONS,
      duration: SECONDS,
      requests: [
        {
          setupRequest: (req) => {
            const key = keys[1 + (emp % (KEYS - 1))]!;
            const body = JSON.stringify({ event_type: 'employee.created', data: { emp_number: `E-${emp++}`, name: 'Load Test', email: 'load@example.com', employee_type: 'site_worker' } });
            const timestamp = String(Math.floor(Date.now() / 1000));
            return {
              ...req,
              body,
              headers: {
                'Content-Type': 'application/json',
                'X-API-Key': key.key,
                'X-Webhook-Timestamp': timestamp,
                'X-Webhook-Signature': signWebhook(key.signingSecret, timestamp, body),
              },
            };
          },
        },
      ],
    });
    report('2. Inbound write  POST /webhooks/inbound employee.created (signed)', inbound);

    // Let the backlog of the load phase drain before timing single deliveries: no endpoint existed during it.
    const registered = await fetch(`${base}/api/v1/webhook-endpoints`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': keys[0]!.key },
      body: JSON.stringify({ url: receiver.url, event_types: ['employee.created'] }),
    });
    if (registered.status !== 201) throw new Error(`endpoint registration failed: ${registered.status}`);
    const sentAt = new Map<string, number>();
    const deliveries = 100;
    for (let i = 0; i < deliveries; i++) {
      const key = keys[1 + (i % (KEYS - 1))]!;
      const body = JSON.stringify({ event_type: 'employee.created', data: { emp_number: `D-${i}`, name: 'Delivery Test', email: 'd@example.com', employee_type: 'office' } });
      const timestamp = String(Math.floor(Date.now() / 1000));
      const response = await fetch(`${base}/webhooks/inbound`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-API-Key': key.key, 'X-Webhook-Timestamp': timestamp, 'X-Webhook-Signature': signWebhook(key.signingSecret, timestamp, body) },
        body,
      });
      const { event_id } = (await response.json()) as { event_id: string };
      sentAt.set(event_id, Date.now());
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const received = await receiver.waitForRequests(deliveries, 120_000);
    const latencies = received.map((r) => r.receivedAt - sentAt.get(JSON.parse(r.body).event_id)!).sort((a, b) => a - b);
    console.log(
      `3. Outbound delivery latency (inbound 200 → subscriber receives the signed POST), ${deliveries} events\n` +
        `  ms: p50 ${percentile(latencies, 50)}, p90 ${percentile(latencies, 90)}, p99 ${percentile(latencies, 99)}, max ${latencies.at(-1)}`,
    );
  } finally {
    await receiver.close();
    await orm.close();
    service.kill('SIGTERM');
    await new Promise((resolve) => service.once('exit', resolve));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
