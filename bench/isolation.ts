import { Pool } from 'pg';
import { parseEncryptionKey } from '../src/config';
import { connectOrm } from '../src/database';
import { startReceiver, type TestReceiver } from '../test/helpers/https-receiver';
import { DeliveryProbe } from './deliveries';
import { summary } from './http-load';
import { DEAD, deadEndpoints, eventTemplate, firstAttemptStages, startIsolationProcesses } from './isolation-stack';
import { seedTenant } from './seed';
import type { CompiledProject, NodeProcess, Servers } from './stack';

/**
 * Issue 25's benchmark: one company's dead subscriber endpoints must not slow another company's deliveries, and
 * nothing held behind them may be lost.
 *
 * Company "Dead" has five endpoints on loopback, three that accept TLS and never answer and two whose port refuses
 * connections, and `events` events committed at once to its outbox: five deliveries each. Company "Healthy" has one
 * endpoint that answers at once; its commit → receipt latency is measured quiet, then while the dead company's
 * deliveries are dispatched, attempted and held. Then the dead endpoints come back (the hanging ones answer 200, the
 * refused ports listen), and every dead delivery must end delivered, exactly once per X-Webhook-ID at its receiver,
 * or failed with its alert.
 *
 * An api and a worker of the phase's own (a task queue of their own; the other phases' processes are stopped), so
 * that the worker's peak RSS is this phase's. The worker's breaker and retry schedule are shortened so that the
 * endpoints' recovery is noticed within a bounded wait: the defaults (a cool-down doubling to 10 min, retries up to
 * 6 h apart) are right for production and would make the wait hours long.
 */
export interface IsolationSettings {
  /** Events committed for the dead company; each is delivered to its 5 endpoints. */
  events: number;
  /**
   * Healthy deliveries committed per second while measuring (few: under the dead company's load the worker serves a
   * few workflow tasks a second, and a probe of its own weight would measure itself), and the length of a round.
   */
  probeRate: number;
  probeSeconds: number;
  /** Bound of each wait: for the load to be taken up, for the healthy deliveries committed meanwhile to arrive, and for the dead endpoints' deliveries to drain once back. */
  timeoutMs: number;
}

/** The worker's settings for the phase: a breaker and retries that notice a recovery within a minute or two. */
export const ISOLATION_WORKER_ENV = {
  WEBHOOK_CIRCUIT_COOLDOWN: '5',
  WEBHOOK_CIRCUIT_MAX_COOLDOWN: '30',
  WEBHOOK_RETRY_SCHEDULE: '5,10,20,40,80',
};

const EVENT_TYPE = 'customer.created';

type Latency = { p50: number; p99: number; max: number };

export interface IsolationResult {
  deliveries: number;
  quiet: Latency;
  during: Latency;
  /** Healthy deliveries committed while the dead company's burst was dispatched and taken up, and how many arrived. */
  duringSent: number;
  duringReceived: number;
  /** Where the healthy deliveries' time went during the load: commit → dispatched (delivery row), dispatched → first attempt. */
  duringDispatch: Latency;
  duringToAttempt: Latency;
  /** Then, with every dead delivery deferred, held or hanging: healthy deliveries committed and received, and their latency. */
  held: Latency;
  heldSent: number;
  heldReceived: number;
  /** From the burst's commit until every dead delivery was held, attempted or deferred: what "during" covers. */
  loadSeconds: number;
  /** Endpoints of the dead company whose breaker was open when the endpoints came back, and deliveries held then. */
  openBreakers: number;
  heldAtRecovery: number;
  /** From the endpoints' return until every dead delivery was delivered or failed (or the timeout). */
  recoverySeconds: number;
  delivered: number;
  failedWithAlert: number;
  /** Neither delivered nor failed with an alert when the wait ended: lost, or still held (the progress lines tell which). */
  unfinished: number;
  /** Receipts at the recovered receivers beyond one per X-Webhook-ID, and deliveries recorded delivered that no receiver answered. */
  duplicates: number;
  deliveredUnseen: number;
  healthyLost: number;
  workerRssMb: number;
  seconds: number;
}

/** A receiver that answers 200 and counts receipts by X-Webhook-ID. */
function answerAndCount(receiver: TestReceiver, receipts: Map<string, number>): void {
  receiver.respondWith((request) => {
    const id = String(request.headers['x-webhook-id']);
    receipts.set(id, (receipts.get(id) ?? 0) + 1);
    return { status: 200, body: '{"received":true}', headers: { 'Content-Type': 'application/json' } };
  });
}

interface DeadState {
  total: number;
  takenUp: number;
  held: number;
  delivered: number;
  failed: number;
  failedWithAlert: number;
  openBreakers: number;
}

async function deadState(db: Pool, companyId: string): Promise<DeadState> {
  const [row] = (
    await db.query<Record<keyof DeadState, string>>(
      `select count(*) as total,
         count(*) filter (where d.held_until is not null or d.deferred_since is not null or d.status <> 'pending' or exists (select 1 from webhook_delivery_attempts a where a.delivery_id = d.id)) as "takenUp",
         count(*) filter (where d.held_until is not null) as held,
         count(*) filter (where d.status = 'delivered') as delivered,
         count(*) filter (where d.status = 'failed') as failed,
         count(*) filter (where d.status = 'failed' and exists (select 1 from webhook_alerts w where w.delivery_id = d.id and w.kind = 'delivery_failed')) as "failedWithAlert",
         (select count(*) from webhook_endpoints e where e.company_id = $1 and e.circuit_state <> 'closed') as "openBreakers"
       from webhook_deliveries d where d.company_id = $1`,
      [companyId],
    )
  ).rows;
  return Object.fromEntries(Object.entries(row!).map(([k, v]) => [k, Number(v)])) as unknown as DeadState;
}

const describeState = (s: DeadState) =>
  `${s.total} deliveries, ${s.takenUp} held, attempted or deferred, ${s.held} held, ${s.delivered} delivered, ${s.failed} failed (${s.failedWithAlert} with alert), ${s.openBreakers} breakers not closed`;

export async function isolationPhase(servers: Servers, compiled: CompiledProject, logDir: string, settings: IsolationSettings): Promise<IsolationResult> {
  const started = Date.now();
  const processes: NodeProcess[] = [];
  const receivers: TestReceiver[] = [];
  const orm = await connectOrm(servers.databaseUrl, 4);
  const db = new Pool({ connectionString: servers.databaseUrl, max: 4 });
  try {
    const stack = await startIsolationProcesses('isolation', servers, compiled, logDir, ISOLATION_WORKER_ENV);
    const { worker } = stack;
    processes.push(worker, stack.api);
    const key = parseEncryptionKey(stack.common.ENCRYPTION_KEY);
    const healthy = await seedTenant(orm, key, 'Isolation Healthy', { keys: 1, projects: 0 });
    const dead = await seedTenant(orm, key, 'Isolation Dead', { keys: 1, projects: 0 });
    await stack.ready();

    const healthyReceiver = await startReceiver();
    receivers.push(healthyReceiver);
    const healthyEndpointId = await stack.register(healthy.keys[0]!.key, healthyReceiver.url, [EVENT_TYPE]);
    const { hanging, refusedPorts, urls } = await deadEndpoints(receivers);
    for (const url of urls) await stack.register(dead.keys[0]!.key, url, [EVENT_TYPE]);

    const data = await eventTemplate(db, healthy.companyId);
    const probe = new DeliveryProbe(db, { companyId: healthy.companyId, eventType: EVENT_TYPE, data }, healthyReceiver);

    const quiet = await probe.run(settings.probeRate, 3 * settings.probeSeconds);
    console.log(`Isolation: quiet commit → receipt p50 ${quiet.latency.p50} / p99 ${quiet.latency.p99} ms (${quiet.received} of ${quiet.sent}).`);

    // The burst: every event of the dead company in one commit, as a bulk import would make them.
    const deliveries = settings.events * DEAD;
    const burstAt = Date.now();
    await db.query(
      `insert into outbox_events (id, company_id, event_type, data, created_at, updated_at)
       select gen_random_uuid(), $1, $2, $3, clock_timestamp(), clock_timestamp() from generate_series(1, $4)`,
      [dead.companyId, EVENT_TYPE, JSON.stringify(data), settings.events],
    );
    // While the load is taken up (every dead delivery dispatched, then held, attempted or deferred without a run beyond
    // its endpoint's budget: docs/isolation.md), healthy deliveries in
    // rounds; each is timed when it arrives, which may be long after its round.
    let state: DeadState;
    let roundStart = burstAt;
    do {
      await probe.run(settings.probeRate, settings.probeSeconds, 0);
      state = await deadState(db, dead.companyId);
      const healthySoFar = probe.committedBetween(burstAt, Date.now());
      // The round's healthy deliveries received by now: which stage of the load slows them, if any.
      const round = probe.committedBetween(roundStart, Date.now());
      roundStart = Date.now();
      console.log(
        `Isolation, ${((Date.now() - burstAt) / 1000).toFixed(0)} s into the load: ${describeState(state)}; ` +
          `healthy ${healthySoFar.latencies.length} of ${healthySoFar.sent} received (this round's slowest so far ${Math.max(0, ...round.latencies)} ms); ` +
          `worker RSS ${worker.rssMb().toFixed(0)} MB.`,
      );
    } while ((state.total < deliveries || state.takenUp < deliveries) && Date.now() - burstAt < settings.timeoutMs);
    const loadEnd = Date.now();
    const loadSeconds = (loadEnd - burstAt) / 1000;
    await probe.drained(settings.timeoutMs);
    const during = probe.committedBetween(burstAt, loadEnd);
    const stages = await firstAttemptStages(db, healthyEndpointId, burstAt, loadEnd);
    const heldRound = await probe.run(settings.probeRate, 3 * settings.probeSeconds, 300_000);
    state = await deadState(db, dead.companyId);
    console.log(`Isolation, every dead delivery held, attempted or deferred: healthy p50 ${heldRound.latency.p50} / p99 ${heldRound.latency.p99} ms; ${describeState(state)}.`);

    // The dead endpoints come back: the hanging ones answer (attempts already hanging still time out), the refused ports listen.
    const receipts = new Map<string, number>();
    const recoveredAt = Date.now();
    for (const receiver of hanging) answerAndCount(receiver, receipts);
    for (const port of refusedPorts) {
      const receiver = await startReceiver({ port });
      receivers.push(receiver);
      answerAndCount(receiver, receipts);
    }
    const atRecovery = state;
    let lastReport = Date.now();
    while (state.delivered + state.failed < deliveries && Date.now() - recoveredAt < settings.timeoutMs) {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      state = await deadState(db, dead.companyId);
      if (Date.now() - lastReport > 30_000) {
        lastReport = Date.now();
        console.log(`Isolation, ${((Date.now() - recoveredAt) / 1000).toFixed(0)} s after the endpoints came back: ${describeState(state)}.`);
      }
    }
    const recoverySeconds = (Date.now() - recoveredAt) / 1000;
    // A moment for receipts whose delivery committed just now to be counted, then receipts against the rows.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const deliveredIds = new Set(
      (await db.query<{ id: string }>(`select id from webhook_deliveries where company_id = $1 and status = 'delivered'`, [dead.companyId])).rows.map((r) => r.id),
    );
    const healthyTally = probe.tally();
    return {
      deliveries,
      quiet: quiet.latency,
      during: summary(during.latencies),
      duringSent: during.sent,
      duringReceived: during.latencies.length,
      duringDispatch: stages.dispatch,
      duringToAttempt: stages.toAttempt,
      held: heldRound.latency,
      heldSent: heldRound.sent,
      heldReceived: heldRound.received,
      loadSeconds,
      openBreakers: atRecovery.openBreakers,
      heldAtRecovery: atRecovery.held,
      recoverySeconds,
      delivered: state.delivered,
      failedWithAlert: state.failedWithAlert,
      unfinished: deliveries - state.delivered - state.failedWithAlert,
      duplicates: [...receipts.values()].reduce((sum, n) => sum + n - 1, 0),
      deliveredUnseen: [...deliveredIds].filter((id) => !receipts.has(id)).length,
      healthyLost: healthyTally.lost,
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
