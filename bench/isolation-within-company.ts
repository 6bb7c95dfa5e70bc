import { Pool } from 'pg';
import { loadConfig, parseEncryptionKey } from '../src/config';
import { connectOrm } from '../src/database';
import { runsPerEndpoint } from '../src/delivery/outbox/endpoint-room';
import { startReceiver, type TestReceiver } from '../test/helpers/https-receiver';
import { DeliveryProbe } from './deliveries';
import { summary } from './http-load';
import { DEAD, deadEndpoints, eventTemplate, firstAttemptStages, startIsolationProcesses } from './isolation-stack';
import { seedTenant } from './seed';
import type { CompiledProject, NodeProcess, Servers } from './stack';

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

const PROBE_TYPE = 'contact.updated';
const BURST_TYPE = 'customer.updated';
const BURST_CHUNK = 100;

type Latency = { p50: number; p99: number; max: number };
type Stages = { dispatch: Latency; toAttempt: Latency };

export interface CompanyIsolationResult {
  quiet: Latency;
  quietSent: number;
  quietReceived: number;
  /** Healthy deliveries committed while the burst was committed and dispatched, and how many arrived. */
  during: Latency;
  duringSent: number;
  duringReceived: number;
  /** Where each round's healthy deliveries spent their time: commit → delivery row written, row → first attempt. */
  quietStages: Stages;
  duringStages: Stages;
  afterStages: Stages;
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
  /** A dead endpoint's budget of runs in trouble: never delivered, its budget before its first delivery. */
  runCap: number;
  healthyLost: number;
  healthyDuplicates: number;
  workerRssMb: number;
  seconds: number;
}

export async function companyIsolationPhase(servers: Servers, compiled: CompiledProject, logDir: string, settings: CompanyIsolationSettings): Promise<CompanyIsolationResult> {
  const started = Date.now();
  const processes: NodeProcess[] = [];
  const receivers: TestReceiver[] = [];
  const orm = await connectOrm(servers.databaseUrl, 4);
  const db = new Pool({ connectionString: servers.databaseUrl, max: 6 });
  try {
    const stack = await startIsolationProcesses('isolation-within-company', servers, compiled, logDir);
    const { common, worker } = stack;
    processes.push(worker, stack.api);
    const company = await seedTenant(orm, parseEncryptionKey(common.ENCRYPTION_KEY), 'Isolation Within', { keys: 1, projects: 0 });
    await stack.ready();
    const register = (url: string, eventTypes: string[]) => stack.register(company.keys[0]!.key, url, eventTypes);

    const healthyReceiver = await startReceiver();
    receivers.push(healthyReceiver);
    const healthyEndpointId = await register(healthyReceiver.url, [PROBE_TYPE]);
    const data = await eventTemplate(db, company.companyId);
    const probe = new DeliveryProbe(db, { companyId: company.companyId, eventType: PROBE_TYPE, data }, healthyReceiver);

    // A warm-up, not counted: the endpoint's first deliveries (a new TLS session, code run for the first time) are not its quiet pace.
    await probe.run(settings.probeRate, 2);
    const quietFrom = Date.now();
    const quiet = await probe.run(settings.probeRate, 3 * settings.probeSeconds);
    const quietStages = await firstAttemptStages(db, healthyEndpointId, quietFrom, Date.now());
    console.log(`Isolation within a company: quiet commit → receipt p50 ${quiet.latency.p50} / p99 ${quiet.latency.p99} ms (${quiet.received} of ${quiet.sent}).`);

    const deadIds: string[] = [];
    for (const url of (await deadEndpoints(receivers)).urls) deadIds.push(await register(url, [BURST_TYPE, PROBE_TYPE]));
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
          [company.companyId, BURST_TYPE, JSON.stringify(data), chunk],
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
    const stages = await firstAttemptStages(db, healthyEndpointId, burstAt, burstEnd);

    const afterFrom = Date.now();
    const after = await probe.run(settings.probeRate, 3 * settings.probeSeconds, settings.timeoutMs);
    const afterStages = await firstAttemptStages(db, healthyEndpointId, afterFrom, Date.now());
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
      quietStages,
      duringStages: stages,
      afterStages,
      burstSeconds: (burstEnd - burstAt) / 1000,
      after: after.latency,
      afterSent: after.sent,
      afterReceived: after.received,
      deadOwed: state.owed,
      deadWritten: state.written,
      deadAttempted: state.attempted,
      deferredAtEnd: state.deferred,
      maxStartedRuns,
      runCap: runsPerEndpoint(loadConfig(common).webhooks.admission).maxRunsBeforeFirstDelivery,
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
