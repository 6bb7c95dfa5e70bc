import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseEncryptionKey } from '../src/config';
import { signWebhook } from '../src/crypto/webhook-signature';
import { connectOrm } from '../src/db/orm';
import { freePort } from '../test/helpers/ports';
import { load, type LoadResult } from './http-load';
import { seedTenant } from './seed';
import { type CompiledProject, nodeFlagsOf, type NodeProcess, phaseEnv, type Servers, startNode, waitForHttp } from './stack';

/**
 * Issue 26's benchmark: what tracing costs the api. Two api processes of the same build on the run's servers, one with
 * tracing off (no OTEL_* variable: nothing of the OpenTelemetry SDK is loaded) and one exporting every span over
 * OTLP/HTTP (protobuf, batched) to a collector stand-in that takes the exports and answers at once. The REST list and
 * the signed inbound create are loaded on each in turn, off, on, off, on, off: the spread of the runs with tracing off
 * shows how far measurements of the same thing differ here, and tracing on is set against their median. Besides
 * requests a second, the CPU time the api spent per request: on 2 cores shared with the load generator, the steadier
 * figure.
 */
export interface TracingRun {
  load: LoadResult;
  cpuMsPerRequest: number;
}

export interface TracingMeasure {
  work: string;
  off: TracingRun[];
  on: TracingRun[];
}

export interface TracingResult {
  measures: TracingMeasure[];
  /** OTLP exports the collector stand-in received, and their bytes: proof that the traced api exported. */
  exports: number;
  exportedBytes: number;
}

/** An OTLP/HTTP endpoint that takes trace exports and answers 200 with an empty response, as a collector would. */
async function startCollectorStandIn(): Promise<{ url: string; exports: () => number; bytes: () => number; close(): Promise<void> }> {
  let exports = 0;
  let bytes = 0;
  const server = http.createServer((request, response) => {
    request.on('data', (chunk: Buffer) => (bytes += chunk.length));
    request.on('end', () => {
      exports++;
      response.writeHead(200, { 'Content-Type': request.headers['content-type'] ?? 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
    exports: () => exports,
    bytes: () => bytes,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export async function tracingPhase(servers: Servers, compiled: CompiledProject, dir: string, options: { seconds: number; connections: number; keys: number }): Promise<TracingResult> {
  const common = {
    ...phaseEnv(servers, 'tracing'),
    HOST: '127.0.0.1',
    OTEL_TRACES_EXPORTER: '',
  };

  const collector = await startCollectorStandIn();
  const orm = await connectOrm(servers.databaseUrl, 4);
  const processes: NodeProcess[] = [];
  try {
    const tenant = await seedTenant(orm, parseEncryptionKey(common.ENCRYPTION_KEY), 'Bench Tracing', { keys: options.keys, projects: 200 });
    const startApi = async (name: string, env: Record<string, string>) => {
      const port = await freePort();
      const api = startNode(name, compiled.entry('src/api/main.ts'), { ...common, ...env, PORT: String(port) }, { logDir: dir, flags: nodeFlagsOf('start:api') });
      processes.push(api);
      await waitForHttp(`http://127.0.0.1:${port}/health`, api);
      return { url: `http://127.0.0.1:${port}`, proc: api };
    };
    const off = await startApi('tracing-off-api', {});
    const on = await startApi('tracing-on-api', {
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: collector.url,
      OTEL_SERVICE_NAME: 'bench-api',
    });

    let n = 0;
    const keyOf = () => tenant.keys[n++ % tenant.keys.length]!;
    const run = (url: string, method: 'GET' | 'POST', next: () => { headers?: Record<string, string>; body?: string }) =>
      load({ url, method, seconds: options.seconds, connections: options.connections, next });
    const list = (base: string) => run(`${base}/api/v1/projects?limit=50`, 'GET', () => ({ headers: { 'X-API-Key': keyOf().key } }));
    const inbound = (base: string) =>
      run(`${base}/webhooks/inbound`, 'POST', () => {
        const key = keyOf();
        const body = JSON.stringify({ event_type: 'customer.created', timestamp: new Date().toISOString(), source: 'bench', data: { name: `Traced ${n}` } });
        const timestamp = String(Math.floor(Date.now() / 1000));
        return { headers: { 'Content-Type': 'application/json', 'X-API-Key': key.key, 'X-Webhook-Timestamp': timestamp, 'X-Webhook-Signature': signWebhook(key.signingSecret, timestamp, body) }, body };
      });

    const measures: TracingMeasure[] = [];
    for (const [work, measure] of [
      ['REST list: GET /projects?limit=50 (of 200)', list],
      ['Inbound simple create: signed customer.created', inbound],
    ] as const) {
      const runs: TracingMeasure = { work, off: [], on: [] };
      for (let turn = 0; turn < 5; turn++) {
        const api = turn % 2 === 0 ? off : on;
        const before = api.proc.cpuSeconds();
        const result = await measure(api.url);
        (turn % 2 === 0 ? runs.off : runs.on).push({ load: result, cpuMsPerRequest: (1000 * (api.proc.cpuSeconds() - before)) / Math.max(1, result.served) });
      }
      measures.push(runs);
    }
    return { measures, exports: collector.exports(), exportedBytes: collector.bytes() };
  } finally {
    for (const proc of processes.reverse()) await proc.stop();
    await orm.close();
    await collector.close();
  }
}
