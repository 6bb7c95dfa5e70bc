import type { Pool } from 'pg';
import { startReceiver, testCertificate, type TestReceiver } from '../test/helpers/https-receiver';
import { freePort } from '../test/helpers/ports';
import { summary } from './http-load';
import { type CompiledProject, type NodeProcess, phaseEnv, type Servers, startNode, waitForHttp, waitForOutput } from './stack';

/** The dead endpoints of the isolation phases (9 and 13): three accept TLS and never answer, two refuse connections. */
export const HANGING = 3;
export const REFUSING = 2;
export const DEAD = HANGING + REFUSING;

export interface IsolationProcesses {
  common: ReturnType<typeof phaseEnv>;
  worker: NodeProcess;
  api: NodeProcess;
  /** Resolves once the api answers and the worker runs. */
  ready(): Promise<void>;
  /** Registers an endpoint through the api with `apiKey` (and `more` of its settings); returns its id. */
  register(apiKey: string, url: string, eventTypes: string[], more?: Record<string, unknown>): Promise<string>;
}

/**
 * An api and a worker of the phase's own (a task queue of their own; the other phases' processes are stopped), allowed
 * to deliver to loopback receivers signed by the test CA. `workerEnv` adds to the worker's settings.
 */
export async function startIsolationProcesses(
  phase: string,
  servers: Servers,
  compiled: CompiledProject,
  logDir: string,
  workerEnv: Record<string, string> = {},
): Promise<IsolationProcesses> {
  const common = phaseEnv(servers, phase);
  const apiPort = await freePort();
  const worker = startNode(
    `${phase}-worker`,
    compiled.entry('src/worker/main.ts'),
    { ...common, ...workerEnv, WEBHOOK_ALLOW_LOOPBACK: 'true', NODE_EXTRA_CA_CERTS: testCertificate().certFile, WORKER_METRICS_PORT: '0' },
    { logDir, as: 'start:worker' },
  );
  const api = startNode(`${phase}-api`, compiled.entry('src/api/main.ts'), { ...common, PORT: String(apiPort), HOST: '127.0.0.1', WEBHOOK_ALLOW_LOOPBACK: 'true' }, {
    logDir,
    as: 'start:api',
  });
  return {
    common,
    worker,
    api,
    ready: async () => {
      await Promise.all([waitForHttp(`http://127.0.0.1:${apiPort}/health`, api), waitForOutput(worker, 'worker running')]);
    },
    async register(apiKey, url, eventTypes, more = {}) {
      const response = await fetch(`http://127.0.0.1:${apiPort}/api/v1/webhook-endpoints`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-API-Key': apiKey },
        body: JSON.stringify({ url, event_types: eventTypes, ...more }),
      });
      if (response.status !== 201) throw new Error(`endpoint registration answered ${response.status}: ${await response.text()}`);
      return ((await response.json()) as { id: string }).id;
    },
  };
}

/** The dead endpoints' URLs: HANGING receivers (added to `receivers`, to close) that never answer, and REFUSING closed ports. */
export async function deadEndpoints(receivers: TestReceiver[]): Promise<{ hanging: TestReceiver[]; refusedPorts: number[]; urls: string[] }> {
  const hanging = await Promise.all(Array.from({ length: HANGING }, () => startReceiver()));
  receivers.push(...hanging);
  for (const receiver of hanging) receiver.respondWith(() => ({ status: 200, hang: true }));
  const refusedPorts = await Promise.all(Array.from({ length: REFUSING }, () => freePort()));
  return { hanging, refusedPorts, urls: [...hanging.map((r) => r.url), ...refusedPorts.map((port) => `https://localhost:${port}/hook`)] };
}

/** The data of the seeded company's own customer.created: the body of a real event, the template of every event a phase commits. */
export async function eventTemplate(db: Pool, companyId: string): Promise<Record<string, unknown>> {
  const [template] = (await db.query(`select data from outbox_events where company_id = $1 and event_type = 'customer.created' limit 1`, [companyId])).rows;
  if (!template) throw new Error('the seeded company has no customer.created event to copy');
  return template.data;
}

/**
 * Where an endpoint's deliveries of events committed between `from` and `to` (ms since the epoch) spent their time:
 * commit → delivery row written (dispatch), row → first attempt.
 */
export async function firstAttemptStages(db: Pool, endpointId: string, from: number, to: number) {
  const { rows } = await db.query<{ dispatch_ms: number; attempt_ms: number }>(
    `select (extract(epoch from d.created_at - o.created_at) * 1000)::float8 as dispatch_ms, (extract(epoch from a.created_at - d.created_at) * 1000)::float8 as attempt_ms
       from webhook_deliveries d
       join outbox_events o on o.id = d.event_id
       join webhook_delivery_attempts a on a.delivery_id = d.id and a.attempt_number = 0
      where d.endpoint_id = $1 and o.created_at >= to_timestamp($2 / 1000.0) and o.created_at < to_timestamp($3 / 1000.0)`,
    [endpointId, from, to],
  );
  return { dispatch: summary(rows.map((r) => r.dispatch_ms)), toAttempt: summary(rows.map((r) => r.attempt_ms)) };
}
