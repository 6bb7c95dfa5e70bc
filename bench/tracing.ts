import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseEncryptionKey } from '../src/config';
import { signWebhook } from '../src/crypto/webhook-signature';
import { connectOrm } from '../src/database';
import { decodeExport } from '../test/helpers/otlp-receiver';
import { freePort } from '../test/helpers/ports';
import { load, type LoadResult, median } from './http-load';
import { seedTenant } from './seed';
import { type CompiledProject, type NodeProcess, phaseEnv, type Servers, startNode, waitForHttp } from './stack';

/**
 * Issue 26's benchmark: what tracing costs the api. Four api processes of the same build on the run's servers:
 * - `bare`: no OTEL_* variable at all, the service as it runs without tracing (nothing of the SDK is loaded);
 * - `control`: a second api like bare, the yardstick of the run: how far apart two processes of the same code and
 *   settings measure on this machine in these minutes;
 * - `off`: configured for a collector but switched off, as an operator leaves it (`OTEL_TRACES_EXPORTER=none`,
 *   with an endpoint, a protocol and a service name set);
 * - `on`: every span exported over OTLP/HTTP (protobuf, batched) to a collector stand-in that takes the exports and
 *   answers at once.
 *
 * The figure is the CPU time the api spent per request (from /proc, around each slice of load): on 2 cores shared
 * with the load driver and PostgreSQL, steadier than requests a second (also shown). For each work (the REST list,
 * the signed inbound create) the four are warmed up, then loaded in turn for short slices, round after round, the
 * order turning each round. The machine's speed drifts by a quarter within a minute here (others' work, CPU
 * frequency), so each round compares its own slices: bare's CPU per request over each other's, as a
 * throughput ratio (1 = as fast as bare). The verdicts take the median of the rounds' ratios.
 */
export interface TracingSlice {
  load: LoadResult;
  cpuMsPerRequest: number;
}

export type TracingApi = 'bare' | 'control' | 'off' | 'on';
export const TRACING_APIS: readonly TracingApi[] = ['bare', 'control', 'off', 'on'];

export interface TracingMeasure {
  work: string;
  rounds: Record<TracingApi, TracingSlice>[];
  /** What the traced api exported while measured: spans, traces, and spans by name (statements by their verb). */
  spans: number;
  traces: number;
  spansByName: [string, number][];
}

export interface TracingResult {
  measures: TracingMeasure[];
  /** OTLP exports the collector stand-in received, and their bytes: proof that the traced api exported. */
  exports: number;
  exportedBytes: number;
}

/** An OTLP/HTTP endpoint that takes trace exports and answers 200 with an empty response, as a collector would. */
async function startCollectorStandIn(): Promise<{ url: string; exports: () => number; bytes: () => number; take(): Buffer[]; close(): Promise<void> }> {
  let bodies: Buffer[] = [];
  let exports = 0;
  let bytes = 0;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      exports++;
      const body = Buffer.concat(chunks);
      bytes += body.length;
      // Kept as received and decoded between measurements: decoding costs CPU the apis share.
      bodies.push(body);
      response.writeHead(200, { 'Content-Type': request.headers['content-type'] ?? 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
    exports: () => exports,
    bytes: () => bytes,
    take() {
      const taken = bodies;
      bodies = [];
      return taken;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The median over the rounds of bare's CPU per request over `api`'s: the share of bare's throughput per CPU second it keeps. */
export const ratioToBare = (measure: TracingMeasure, api: TracingApi) => median(measure.rounds.map((round) => round.bare.cpuMsPerRequest / round[api].cpuMsPerRequest));

/** With `options.profileDir`, each api writes its V8 CPU profiles there (in tracing-bare-api/, …). */
export async function tracingPhase(
  servers: Servers,
  compiled: CompiledProject,
  dir: string,
  options: { rounds: number; sliceSeconds: number; connections: number; keys: number; profileDir?: string },
): Promise<TracingResult> {
  const common = { ...phaseEnv(servers, 'tracing'), HOST: '127.0.0.1' };
  const collector = await startCollectorStandIn();
  const orm = await connectOrm(servers.databaseUrl, 4);
  const procs: Partial<Record<TracingApi, NodeProcess>> = {};
  try {
    const tenant = await seedTenant(orm, parseEncryptionKey(common.ENCRYPTION_KEY), 'Bench Tracing', { keys: options.keys, projects: 200 });
    const collectorSettings = { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: collector.url, OTEL_SERVICE_NAME: 'bench-api' };
    const envOf: Record<TracingApi, Record<string, string>> = {
      bare: {},
      control: {},
      off: { ...collectorSettings, OTEL_TRACES_EXPORTER: 'none' },
      on: { ...collectorSettings, OTEL_TRACES_EXPORTER: 'otlp' },
    };
    const urls = {} as Record<TracingApi, string>;
    for (const api of TRACING_APIS) {
      const port = await freePort();
      const proc = startNode(`tracing-${api}-api`, compiled.entry('src/api/main.ts'), { ...common, ...envOf[api], PORT: String(port) }, { logDir: dir, profileDir: options.profileDir, as: 'start:api' });
      procs[api] = proc;
      urls[api] = `http://127.0.0.1:${port}`;
      await waitForHttp(`${urls[api]}/health`, proc);
    }

    let n = 0;
    const keyOf = () => tenant.keys[n++ % tenant.keys.length]!;
    const run = (url: string, method: 'GET' | 'POST', seconds: number, next: () => { headers?: Record<string, string>; body?: string }) =>
      load({ url, method, seconds, connections: options.connections, next });
    const list = (base: string, seconds: number) => run(`${base}/api/v1/projects?limit=50`, 'GET', seconds, () => ({ headers: { 'X-API-Key': keyOf().key } }));
    const inbound = (base: string, seconds: number) =>
      run(`${base}/webhooks/inbound`, 'POST', seconds, () => {
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
      // Warm-up, unmeasured: the first slices of a work ran slower (its code paths still compiling).
      for (const api of TRACING_APIS) await measure(urls[api], 2 * options.sliceSeconds);
      collector.take();
      const rounds: Record<TracingApi, TracingSlice>[] = [];
      for (let round = 0; round < options.rounds; round++) {
        const slices = {} as Record<TracingApi, TracingSlice>;
        for (let i = 0; i < TRACING_APIS.length; i++) {
          const api = TRACING_APIS[(round + i) % TRACING_APIS.length]!;
          const proc = procs[api]!;
          const before = proc.cpuSeconds();
          const result = await measure(urls[api], options.sliceSeconds);
          slices[api] = { load: result, cpuMsPerRequest: (1000 * (proc.cpuSeconds() - before)) / Math.max(1, result.served) };
        }
        rounds.push(slices);
      }
      const spans = collector.take().flatMap((body) => decodeExport('application/x-protobuf', body));
      const byName = new Map<string, number>();
      for (const span of spans) {
        const name = span.name.replace(/^(pg\.query:\S+).*/, '$1');
        byName.set(name, (byName.get(name) ?? 0) + 1);
      }
      measures.push({ work, rounds, spans: spans.length, traces: new Set(spans.map((span) => span.traceId)).size, spansByName: [...byName].sort((a, b) => b[1] - a[1]) });
    }
    return { measures, exports: collector.exports(), exportedBytes: collector.bytes() };
  } finally {
    for (const proc of Object.values(procs).reverse()) await proc.stop();
    await orm.close();
    await collector.close();
  }
}
