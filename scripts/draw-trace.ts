import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { seedTenant } from '../bench/seed';
import { compileProject, type NodeProcess, phaseEnv, startNode, startServers, waitForHttp, waitForOutput } from '../bench/stack';
import { parseEncryptionKey } from '../src/config';
import { signWebhook } from '../src/crypto/webhook-signature';
import { connectOrm } from '../src/database';
import { PROJECT_ROOT } from '../src/paths';
import { startReceiver, testCertificate } from '../test/helpers/https-receiver';
import { type ReceivedSpan, startOtlpReceiver } from '../test/helpers/otlp-receiver';
import { freePort } from '../test/helpers/ports';

/**
 * `npx tsx scripts/draw-trace.ts`: the picture of a trace in docs/operations.md ("Tracing"), made from a real one.
 * The api and the worker run as in production (compiled, as processes of their own, on an embedded PostgreSQL and
 * Temporal dev server), with tracing on, exporting OTLP/HTTP to a receiver here. One signed inbound customer.created
 * is sent; its delivery goes to a subscriber here; the spans of its trace are drawn as a waterfall into an HTML page,
 * which Chromium screenshots into docs/screenshots/trace-waterfall.png (or the file given as argument).
 */
const OUTPUT = path.resolve(process.argv[2] ?? path.join(PROJECT_ROOT, 'docs/screenshots/trace-waterfall.png'));

interface Row {
  span: ReceivedSpan;
  depth: number;
  /** Milliseconds from the trace's first span. */
  start: number;
  duration: number;
}

const millis = (nanos: string) => Number(BigInt(nanos) / 1000n) / 1000;

/** The spans in tree order: each after its parent, siblings by start; a span whose parent is not here is a root. */
function rowsOf(spans: ReceivedSpan[]): Row[] {
  const ids = new Set(spans.map((span) => span.spanId));
  const byStart = [...spans].sort((a, b) => millis(a.startTimeUnixNano) - millis(b.startTimeUnixNano));
  const origin = millis(byStart[0]!.startTimeUnixNano);
  const rows: Row[] = [];
  const visit = (span: ReceivedSpan, depth: number) => {
    const start = millis(span.startTimeUnixNano);
    rows.push({ span, depth, start: start - origin, duration: millis(span.endTimeUnixNano) - start });
    for (const child of byStart.filter((s) => s.parentSpanId === span.spanId)) visit(child, depth + 1);
  };
  for (const root of byStart.filter((span) => !ids.has(span.parentSpanId))) visit(root, 0);
  return rows;
}

const escape = (text: string) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
const ms = (value: number) => (value >= 100 ? `${value.toFixed(0)} ms` : `${value.toFixed(1)} ms`);

/** What a row says besides its name: a statement (its values already replaced by ?), or the status an exchange ended with. */
function detailOf(span: ReceivedSpan): string {
  const { attributes: a } = span;
  if (typeof a['db.statement'] === 'string') return a['db.statement'];
  if (a['http.response.status_code'] !== undefined) return `${String(a['server.address'])} answered ${String(a['http.response.status_code'])}`;
  if (a['http.status_code'] !== undefined) return `answered ${String(a['http.status_code'])}`;
  return '';
}

function waterfall(rows: Row[]): string {
  const total = Math.max(...rows.map((row) => row.start + row.duration));
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => `<span style="left:${f * 100}%">${ms(f * total)}</span>`).join('');
  const body = rows
    .map(({ span, depth, start, duration }) => {
      const service = span.service.replace(/^construction-integration-?/, '') || 'all';
      const left = (100 * start) / total;
      const width = Math.max((100 * duration) / total, 0.2);
      // The duration beside its bar: on the right, or on the left where the bar ends near the edge.
      const label = left + width > 65 ? `right:${100 - left}%` : `left:${left + width}%`;
      return `<tr class="${service}">
  <td class="name" style="padding-left:${6 + depth * 14}px">${escape(span.name)} <span class="detail">${escape(detailOf(span))}</span></td>
  <td class="service">${escape(service)}</td>
  <td class="time"><div class="bar" style="left:${left}%;width:${width}%"></div><span class="label" style="${label}">${ms(duration)}</span></td>
</tr>`;
    })
    .join('\n');
  return `<!doctype html><meta charset="utf-8"><style>
  body { font: 13px system-ui, sans-serif; margin: 12px 16px; color: #222; width: 1248px; }
  h1 { font-size: 14px; margin: 0 0 8px; }
  table { border-collapse: collapse; width: 100%; table-layout: fixed; }
  td { border-top: 1px solid #eee; padding: 2px 6px; white-space: nowrap; }
  .name { width: 560px; overflow: hidden; text-overflow: ellipsis; }
  .detail { color: #888; font: 11px ui-monospace, monospace; }
  .service { width: 52px; color: #555; }
  .time { position: relative; }
  .bar { position: absolute; top: 4px; height: 11px; border-radius: 2px; background: #4a7fd0; }
  .worker .bar { background: #d08a2a; }
  .label { position: absolute; top: 2px; padding: 0 5px; font-size: 11px; color: #555; }
  .axis { position: relative; height: 15px; color: #888; font-size: 11px; }
  .axis span { position: absolute; transform: translateX(-50%); }
  .axis span:first-child { transform: none; }
  .axis span:last-child { transform: translateX(-100%); }
</style>
<h1>One signed inbound customer.created, from the request to the subscriber: one trace of ${rows.length} spans (api blue, worker orange)</h1>
<table><tr><td class="name"></td><td class="service"></td><td><div class="axis">${ticks}</div></td></tr>
${body}
</table>`;
}

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'draw-trace-'));
  // As root, PostgreSQL runs as the postgres user: a folder it can enter.
  chmodSync(dir, 0o755);
  const [servers, compiled] = await Promise.all([startServers(path.join(dir, 'servers')), compileProject()]);
  const otlp = await startOtlpReceiver();
  const subscriber = await startReceiver();
  const processes: NodeProcess[] = [];
  try {
    const env = {
      ...phaseEnv(servers, 'trace-picture'),
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otlp.url,
      // Batches sent at once rather than every 5 s: the trace is complete sooner.
      OTEL_BSP_SCHEDULE_DELAY: '100',
      WEBHOOK_ALLOW_LOOPBACK: 'true',
    };
    const port = await freePort();
    const api = startNode('api', compiled.entry('src/api/main.ts'), { ...env, PORT: String(port), HOST: '127.0.0.1' }, { logDir: dir, as: 'start:api' });
    const worker = startNode('worker', compiled.entry('src/worker/main.ts'), { ...env, NODE_EXTRA_CA_CERTS: testCertificate().certFile, WORKER_METRICS_PORT: '0' }, { logDir: dir, as: 'start:worker' });
    processes.push(api, worker);
    const orm = await connectOrm(servers.databaseUrl, 2);
    const tenant = await seedTenant(orm, parseEncryptionKey(env.ENCRYPTION_KEY), 'Northwind Builders', { keys: 2, projects: 0 }).finally(() => orm.close());
    // The ERP's key sends the change; the subscriber's key, another of the company's, registers the endpoint (a key is
    // not sent the changes it made itself).
    const [{ key, signingSecret }, { key: subscriberKey }] = tenant.keys as [(typeof tenant.keys)[0], (typeof tenant.keys)[0]];
    const baseUrl = `http://127.0.0.1:${port}`;
    await Promise.all([waitForHttp(`${baseUrl}/health`, api), waitForOutput(worker, 'worker running')]);

    const registered = await fetch(`${baseUrl}/api/v1/webhook-endpoints`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': subscriberKey },
      body: JSON.stringify({ url: subscriber.url, event_types: ['customer.created'] }),
    });
    if (registered.status !== 201) throw new Error(`endpoint registration answered ${registered.status}: ${await registered.text()}`);

    const body = JSON.stringify({ event_type: 'customer.created', timestamp: new Date().toISOString(), source: 'erp', data: { name: 'Riverside Clinic' } });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const inbound = await fetch(`${baseUrl}/webhooks/inbound`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': key, 'X-Webhook-Timestamp': timestamp, 'X-Webhook-Signature': signWebhook(signingSecret, timestamp, body) },
      body,
    });
    if (inbound.status !== 200) throw new Error(`the inbound create answered ${inbound.status}: ${await inbound.text()}`);
    const [received] = await subscriber.waitForRequests(1, 60_000).catch((error: unknown) => {
      throw new Error(`no delivery: ${String(error)}\nworker:\n${worker.output().slice(-3000)}`);
    });
    const traceId = String(received!.headers.traceparent).split('-')[1];

    // The trace is complete when the delivery's run has ended and no span came for a second.
    let spans: ReceivedSpan[] = [];
    for (const deadline = Date.now() + 60_000; ; ) {
      if (Date.now() > deadline) throw new Error(`trace ${traceId} incomplete after 60 s: ${spans.map((s) => s.name).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const now = otlp.spans.filter((span) => span.traceId === traceId);
      if (now.length === spans.length && now.some((span) => span.name === 'RunWorkflow:webhookDelivery')) break;
      spans = now;
    }

    // The helper also defines a jest `describe` for browser tests as it loads: a stand-in for it outside jest.
    Object.assign(globalThis, { describe: Object.assign(() => undefined, { skip: () => undefined }) });
    const { launchChromium } = await import('../test/helpers/chromium.js');
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 300 }, deviceScaleFactor: 1 });
      await page.setContent(waterfall(rowsOf(spans)));
      await page.screenshot({ path: OUTPUT, fullPage: true });
    } finally {
      await browser.close();
    }
    console.log(`${spans.length} spans of trace ${traceId} drawn into ${path.relative(process.cwd(), OUTPUT)}`);
  } finally {
    for (const proc of processes.reverse()) await proc.stop();
    await subscriber.close();
    await otlp.close();
    await servers.stop();
    compiled.remove();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
