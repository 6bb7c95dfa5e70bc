import { Pool } from 'pg';
import { loadConfig, parseEncryptionKey } from '../src/config';
import { connectOrm } from '../src/db/orm';
import { runsPerEndpoint } from '../src/delivery/outbox-dispatcher';
import { startReceiver, testCertificate, type TestReceiver } from '../test/helpers/https-receiver';
import { freePort } from '../test/helpers/ports';
import { DeliveryProbe } from './deliveries';
import { summary } from './http-load';
import { seedTenant } from './seed';
import { type CompiledProject, type NodeProcess, phaseEnv, type Servers, startNode, waitForHttp, waitForOutput } from './stack';

/**
 * Issue 43's benchmark: inside one company, dead subscriber endpoints must not slow a healthy one, and their own
 * deliveries must still be written and tried.
 *
 * One company, one healthy endpoint that answers at once, subscribed to the probe's event type. Its commit → receipt
 * latency is measured alone (quiet); then the company registers five dead endpoints (three accept TLS and never answer,
 * two refuse connections), subscribed to the probe's type and to the burst's, and commits `events` burst events at a
 * steady pace, as an ERP's bulk sync would: five deliveries each, all to dead endpoints, besides five more for every
 * probe event. The healthy endpoint is measured while the burst is committed and taken up, and again once it is all
 * written (every dead delivery deferred, held or hanging).
 *
 * The worker runs on the production defaults (30 s attempt deadline, breaker, retry schedule): what a company meets.
 */
export interface CompanyIsolationSettings {
  /** Burst events, each delivered to the 5 dead endpoints. */
  events: number;
  /** The burst's pace: events committed a second, in transactions of up to 100. */
  eventsPerSecond: number;
  /** Probe events committed a second while measuring, and the length of a quiet or "after" round. */
  probeRate: number;
  probeSeconds: number;
  /** Bound of each wait for the healthy deliveries to arrive and for the dead ones to be written. */
  timeoutMs: number;
}

const HANGING = 3;
const REFUSING = 2;
const DEAD = HANGING + REFUSING;
const PROBE_TYPE = 'contact.updated';
const BURST_TYPE = 'customer.updated';
const BURST_CHUNK = 100;

type Latency = { p50: number; p99: number; max: number };

export interface CompanyIsolationResult {
  quiet: Latency;
  quietSent: number;
  quietReceived: number;
  /** Healthy deliveries committed while the burst was committed and dispatched, and how many arrived. */
  during: Latency;
  duringSent: number;
  duringReceived: number;
  /** Where their time went: commit → delivery row written, row → first attempt. */
  duringDispatch: Latency;
  duringToAttempt: Latency;
  /** From the burst's first commit until every dead delivery was written. */
  burstSeconds: number;
  /** Then, with the dead endpoints' deliveries deferred, held or hanging. */
  after: Latency;
  afterSent: number;
  afterReceived: number;
  /** Dead deliveries owed (events committed after the dead endpoints came × 5) and written. */
  deadOwed: number;
  deadWritten: number;
  /** Dead endpoints attempted at least once, deliveries deferred at the end, and the most runs one dead endpoint had started and unfinished at once (sampled). */
  deadAttempted: number;
  deferredAtEnd: number;
  maxStartedRuns: number;
  runCap: number;
  healthyLost: number;
  healthyDuplicates: number;
  workerRssMb: number;
  seconds: number;
}

export async function companyIsolationPhase(servers: Servers, compiled: CompiledProject, logDir: string, settings: CompanyIsolationSettings): Promise<CompanyIsolationResult> {
  const started = Date.now();
  const common = phaseEnv(servers, 'isolation-within-company');
  const apiPort = await freePort();
  const processes: NodeProcess[] = [];
  const receivers: TestReceiver[] = [];
  const orm = await connectOrm(servers.databaseUrl, 4);
  const db = new Pool({ connectionString: servers.databaseUrl, max: 6 });
  try {
    const worker = startNode(
      'company-isolation-worker',
      compiled.entry('src/worker/main.ts'),
      { ...common, WEBHOOK_ALLOW_LOOPBACK: 'true', NODE_EXTRA_CA_CERTS: testCertificate().certFile, WORKER_METRICS_PORT: '0' },
      { logDir, as: 'start:worker' },
    );
    const api = startNode('company-isolation-api', compiled.entry('src/api/main.ts'), { ...common, PORT: String(apiPort), HOST: '127.0.0.1', WEBHOOK_ALLOW_LOOPBACK: 'true' }, {
      logDir,
      as: 'start:api',
    });
    processes.push(worker, api);
    const company = await seedTenant(orm, parseEncryptionKey(common.ENCRYPTION_KEY), 'Isolation Within', { keys: 1, projects: 0 });
    await Promise.all([waitForHttp(`http://127.0.0.1:${apiPort}/health`, api), waitForOutput(worker, 'worker running')]);

    const register = async (url: string, eventTypes: string[]): Promise<string> => {
      const response = await fetch(`http://127.0.0.1:${apiPort}/api/v1/webhook-endpoints`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-API-Key': company.keys[0]!.key },
        body: JSON.stringify({ url, event_types: eventTypes }),
      });
      if (response.status !== 201) throw new Error(`endpoint registration answered ${response.status}: ${await response.text()}`);
      return ((await response.json()) as { id: string }).id;
    };
    const healthyReceiver = await startReceiver();
    receivers.push(healthyReceiver);
    await register(healthyReceiver.url, [PROBE_TYPE]);
    const [template] = (await db.query(`select data from outbox_events where company_id = $1 and event_type = 'customer.created' limit 1`, [company.companyId])).rows;
    if (!template) throw new Error('the seeded company has no customer.created event to copy');
    const probe = new DeliveryProbe(db, { companyId: company.companyId, eventType: PROBE_TYPE, data: template.data }, healthyReceiver);

    const quiet = await probe.run(settings.probeRate, 3 * settings.probeSeconds);
    console.log(`Isolation within a company: quiet commit → receipt p50 ${quiet.latency.p50} / p99 ${quiet.latency.p99} ms (${quiet.received} of ${quiet.sent}).`);

    const hanging = await Promise.all(Array.from({ length: HANGING }, () => startReceiver()));
    receivers.push(...hanging);
    for (const receiver of hanging) receiver.respondWith(() => ({ status: 200, hang: true }));
    const refusedPorts = await Promise.all(Array.from({ length: REFUSING }, () => freePort()));
    const deadIds: string[] = [];
    for (const url of [...hanging.map((r) => r.url), ...refusedPorts.map((port) => `https://localhost:${port}/hook`)]) deadIds.push(await register(url, [BURST_TYPE, PROBE_TYPE]));
    const [{ registered }] = (await db.query<{ registered: Date }>(`select max(created_at) as registered from webhook_endpoints where id = any($1::uuid[])`, [deadIds])).rows as [{ registered: Date }];

    // Dead deliveries owed and written, deferred, attempted endpoints, and the most started, unfinished runs of one dead endpoint.
    const deadState = async () => {
      const [row] = (
        await db.query<{ owed: number; written: number; burst_written: number; deferred: number; attempted: number; most_started: number }>(
          `select (select count(*) from outbox_events o where o.company_id = $1 and o.event_type in ($3, $4) and o.created_at > $5)::int * ${DEAD} as owed,
                  (select count(*) from webhook_deliveries d where d.endpoint_id = any($2::uuid[]))::int as written,
                  (select count(*) from webhook_deliveries d where d.endpoint_id = any($2::uuid[]) and d.event_type = $3)::int as burst_written,
                  (select count(*) from webhook_deliveries d where d.endpoint_id = any($2::uuid[]) and d.deferred_since is not null)::int as deferred,
                  (select count(distinct d.endpoint_id) from webhook_deliveries d join webhook_delivery_attempts a on a.delivery_id = d.id where d.endpoint_id = any($2::uuid[]))::int as attempted,
                  (select coalesce(max(n), 0) from (select count(*) as n from webhook_deliveries d
                     where d.endpoint_id = any($2::uuid[]) and d.deferred_since is null and d.status in ('pending', 'retrying') group by d.endpoint_id) s)::int as most_started`,
          [company.companyId, deadIds, BURST_TYPE, PROBE_TYPE, registered],
        )
      ).rows;
      return row!;
    };

    // The burst, paced, while the probe runs in rounds beside it.
    const burstAt = Date.now();
    let committed = 0;
    const burst = (async () => {
      while (committed < settings.events) {
        const chunk = Math.min(BURST_CHUNK, settings.events - committed);
        const due = burstAt + (committed * 1000) / settings.eventsPerSecond;
        if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
        await db.query(
          `insert into outbox_events (id, company_id, event_type, data, created_at, updated_at)
           select gen_random_uuid(), $1, $2, $3, clock_timestamp(), clock_timestamp() from generate_series(1, $4)`,
          [company.companyId, BURST_TYPE, JSON.stringify(template.data), chunk],
        );
        committed += chunk;
      }
    })();
    let burstDone = false;
    void burst.then(() => (burstDone = true));
    let state = await deadState();
    let maxStartedRuns = 0;
    do {
      await probe.run(settings.probeRate, settings.probeSeconds, 0);
      state = await deadState();
      maxStartedRuns = Math.max(maxStartedRuns, state.most_started);
      console.log(
        `Isolation within a company, ${((Date.now() - burstAt) / 1000).toFixed(0)} s into the burst: ${committed} of ${settings.events} committed; ` +
          `dead deliveries ${state.written} of ${state.owed} written, ${state.deferred} deferred, at most ${state.most_started} started on one endpoint; worker RSS ${worker.rssMb().toFixed(0)} MB.`,
      );
    } while ((!burstDone || state.burst_written < settings.events * DEAD) && Date.now() - burstAt < settings.timeoutMs);
    await burst;
    const burstEnd = Date.now();
    await probe.drained(settings.timeoutMs);
    const during = probe.committedBetween(burstAt, burstEnd);
    const stages = (
      await db.query<{ dispatch_ms: number; attempt_ms: number }>(
        `select (extract(epoch from d.created_at - o.created_at) * 1000)::float8 as dispatch_ms, (extract(epoch from a.created_at - d.created_at) * 1000)::float8 as attempt_ms
           from webhook_deliveries d
           join outbox_events o on o.id = d.event_id
           join webhook_delivery_attempts a on a.delivery_id = d.id and a.attempt_number = 0
          where d.company_id = $1 and d.endpoint_id <> all($2::uuid[]) and o.created_at >= to_timestamp($3 / 1000.0) and o.created_at < to_timestamp($4 / 1000.0)`,
        [company.companyId, deadIds, burstAt, burstEnd],
      )
    ).rows;

    const after = await probe.run(settings.probeRate, 3 * settings.probeSeconds, settings.timeoutMs);
    // The last probe events' dead deliveries are written with their healthy ones: a moment for the count to see them.
    const writtenBy = Date.now() + 10_000;
    state = await deadState();
    while (state.written < state.owed && Date.now() < writtenBy) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      state = await deadState();
    }
    maxStartedRuns = Math.max(maxStartedRuns, state.most_started);
    console.log(`Isolation within a company, burst written: healthy p50 ${after.latency.p50} / p99 ${after.latency.p99} ms; dead deliveries ${state.written} of ${state.owed} written, ${state.deferred} deferred.`);
    const tally = probe.tally();
    return {
      quiet: quiet.latency,
      quietSent: quiet.sent,
      quietReceived: quiet.received,
      during: summary(during.latencies),
      duringSent: during.sent,
      duringReceived: during.latencies.length,
      duringDispatch: summary(stages.map((r) => r.dispatch_ms)),
      duringToAttempt: summary(stages.map((r) => r.attempt_ms)),
      burstSeconds: (burstEnd - burstAt) / 1000,
      after: after.latency,
      afterSent: after.sent,
      afterReceived: after.received,
      deadOwed: state.owed,
      deadWritten: state.written,
      deadAttempted: state.attempted,
      deferredAtEnd: state.deferred,
      maxStartedRuns,
      runCap: runsPerEndpoint(loadConfig(common).webhooks.admission),
      healthyLost: tally.lost,
      healthyDuplicates: tally.duplicates,
      workerRssMb: worker.peakRssMb(),
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    for (const receiver of receivers) await receiver.close();
    await db.end();
    await orm.close();
    for (const proc of processes.reverse()) await proc.stop();
  }
}
