import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Pool } from 'pg';
import { parseEncryptionKey } from '../src/config';
import { connectOrm } from '../src/database';
import { startReceiver, testCertificate, type TestReceiver } from '../test/helpers/https-receiver';
import { freePort } from '../test/helpers/ports';
import { seedTenant } from './seed';
import { offerSignedEmployee, subscribeToEmployeeCreated } from './signed-inbound';
import { type CompiledProject, type NodeProcess, phaseEnv, type Servers, startNode, waitForHttp, waitForOutput } from './stack';

/**
 * Phase 18, chaos (issue 61): signed inbound records through the front door at `perSecond` (twice what the stack
 * sustains) for `seconds`, each delivered to one endpoint, with two workers (each with its dispatcher), while
 * - a connection of its own locks a delivery's row and then its endpoint's, the opposite of the engine's lock order,
 *   over and over, so that PostgreSQL cancels one side of a deadlock now and then;
 * - workers are paused (SIGSTOP, then SIGCONT) longer than the first attempt's hand-off, and in the full run longer than
 *   an activity's heartbeat timeout and a workflow task's timeout, so that Temporal gives their work to the other;
 * - the second worker is killed (SIGKILL) once and started again, as a supervisor would.
 * A tenth of the receiver's answers come after 1.5 s, past the hand-off, so that attempts are in flight at each blow.
 *
 * Measured: records accepted and never delivered (lost), deliveries received twice, and the sends the kill cut between
 * a send and its record: deliveries the receiver had got before the kill whose attempt was still recorded in progress
 * just after it (the killed worker's, and any the other worker was finishing at that moment: a bound from above). A
 * crash there is the one way to a duplicate that at-least-once delivery cannot close.
 */
export interface ChaosSettings {
  seconds: number;
  perSecond: number;
  keys: number;
  /** Each pause: which worker (0 or 1), when (a fraction of the load's time) and how long. */
  pauses: { worker: number; at: number; seconds: number }[];
  /** When the second worker is killed (a fraction of the load's time). */
  killAt: number;
  /** Bound of the wait for the last deliveries after the load. */
  drainMs: number;
}

export interface ChaosResult {
  offered: number;
  accepted: number;
  /** Answers that were not 2xx, by status (a sender would send those again). */
  refused: Record<string, number>;
  delivered: number;
  lost: number;
  receivedTwice: number;
  cutByKill: number;
  /** Deadlocks PostgreSQL detected during the phase, and those whose cancelled side was the provoking connection. */
  deadlocks: { detected: number; inProvoker: number };
  /** From the first request to the last receipt. */
  seconds: number;
  /** What was done, and when (seconds from the first request). */
  blows: string[];
}

export async function chaosPhase(servers: Servers, compiled: CompiledProject, logDir: string, settings: ChaosSettings): Promise<ChaosResult> {
  const env = { ...phaseEnv(servers, 'chaos'), WEBHOOK_ALLOW_LOOPBACK: 'true', RATE_LIMIT_MULTIPLIER: '1000' };
  const workerEnv = { ...env, NODE_EXTRA_CA_CERTS: testCertificate().certFile, WORKER_METRICS_PORT: '0' };
  const startWorker = (name: string) => startNode(name, compiled.entry('src/worker/main.ts'), workerEnv, { logDir, as: 'start:worker' });
  const processes: NodeProcess[] = [];
  const orm = await connectOrm(servers.databaseUrl, 2);
  const db = new Pool({ connectionString: servers.databaseUrl, max: 2 });
  let receiver: TestReceiver | null = null;
  try {
    const workers = [startWorker('chaos-worker-1'), startWorker('chaos-worker-2')];
    processes.push(...workers);
    const apiPort = await freePort();
    const api = startNode('chaos-api', compiled.entry('src/api/main.ts'), { ...env, PORT: String(apiPort), HOST: '127.0.0.1' }, { logDir, as: 'start:api' });
    processes.push(api);
    // One key more than the senders': the endpoint's, whose own changes echo prevention would leave out.
    const tenant = await seedTenant(orm, parseEncryptionKey(env.ENCRYPTION_KEY), 'Chaos', { keys: settings.keys + 1, projects: 0 });
    await Promise.all([waitForHttp(`http://127.0.0.1:${apiPort}/health`, api), ...workers.map((worker) => waitForOutput(worker, 'worker running'))]);
    receiver = await startReceiver();
    receiver.respondWith((_request, index) => ({ status: 200, body: '{"received":true}', delayMs: index % 10 === 9 ? 1500 : 0 }));
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    await subscribeToEmployeeCreated(apiUrl, tenant.keys[settings.keys]!.key, receiver.url);

    const deadlocksBefore = await deadlocksSoFar(db);
    const started = Date.now();
    const blows: string[] = [];
    const at = () => ((Date.now() - started) / 1000).toFixed(1);
    let loadOver = false;
    const provoker = provokeDeadlocks(servers.databaseUrl, tenant.companyId, () => loadOver);
    let cutByKill = 0;
    const chaos = Promise.all([
      ...settings.pauses.map(async (pause) => {
        await sleep(pause.at * settings.seconds * 1000);
        const pid = workers[pause.worker]!.child.pid!;
        process.kill(pid, 'SIGSTOP');
        blows.push(`${at()} s: worker ${pause.worker + 1} paused for ${pause.seconds} s`);
        await sleep(pause.seconds * 1000);
        process.kill(pid, 'SIGCONT');
      }),
      (async () => {
        await sleep(settings.killAt * settings.seconds * 1000);
        workers[1]!.child.kill('SIGKILL');
        const receivedIds = [...new Set(receiver!.requests.map((request) => String(request.headers['x-webhook-id'])))];
        const { rows } = await db.query<{ n: string }>(`select count(distinct delivery_id) as n from webhook_delivery_attempts where outcome = 'in_progress' and delivery_id = any($1::uuid[])`, [
          receivedIds,
        ]);
        cutByKill = Number(rows[0]!.n);
        blows.push(`${at()} s: worker 2 killed (${cutByKill} sends it may have cut between send and record), started again`);
        workers[1] = startWorker('chaos-worker-2-again');
        processes.push(workers[1]);
        await waitForOutput(workers[1], 'worker running');
      })(),
    ]);

    const committed = new Set<string>();
    const refused: Record<string, number> = {};
    const total = Math.round(settings.perSecond * settings.seconds);
    const inFlight = new Set<Promise<void>>();
    for (let n = 0; n < total; n++) {
      // Paced by the clock, with a bound on the requests waiting for their answers.
      const due = started + (n * 1000) / settings.perSecond;
      if (due > Date.now()) await sleep(due - Date.now());
      while (inFlight.size >= 256) await Promise.race(inFlight);
      const record = `chaos-${started}-${n}`;
      const request: Promise<void> = offerSignedEmployee(apiUrl, tenant.keys[n % settings.keys]!, record, 'chaos', refused)
        .then((accepted) => {
          if (accepted) committed.add(record);
        })
        .finally(() => inFlight.delete(request));
      inFlight.add(request);
    }
    await Promise.all(inFlight);
    await chaos;
    loadOver = true;
    const inProvoker = await provoker;

    // Each record by the emp_number its delivery carries (read as receipts come); each delivery by its X-Webhook-ID.
    const received = new Set<string>();
    let read = 0;
    const readReceipts = () => {
      for (; read < receiver!.requests.length; read++) {
        const record = (JSON.parse(receiver!.requests[read]!.body) as { data?: { emp_number?: string } }).data?.emp_number;
        if (record) received.add(record);
      }
    };
    const drainDeadline = Date.now() + settings.drainMs;
    readReceipts();
    while (Date.now() < drainDeadline && [...committed].some((record) => !received.has(record))) {
      await sleep(1000);
      readReceipts();
    }
    // A duplicate of the last moments would come within the attempt's bookkeeping: a moment more.
    await sleep(2000);
    readReceipts();
    const byWebhookId = new Map<string, number>();
    for (const request of receiver.requests) {
      const id = String(request.headers['x-webhook-id']);
      byWebhookId.set(id, (byWebhookId.get(id) ?? 0) + 1);
    }
    const lastReceipt = Math.max(...receiver.requests.map((request) => request.receivedAt));
    return {
      offered: total,
      accepted: committed.size,
      refused,
      delivered: [...committed].filter((record) => received.has(record)).length,
      lost: [...committed].filter((record) => !received.has(record)).length,
      receivedTwice: [...byWebhookId.values()].filter((count) => count > 1).length,
      cutByKill,
      deadlocks: { detected: (await deadlocksSoFar(db)) - deadlocksBefore, inProvoker },
      seconds: (lastReceipt - started) / 1000,
      blows,
    };
  } finally {
    await receiver?.close();
    await db.end();
    await orm.close();
    for (const proc of processes.reverse()) await proc.stop();
  }
}

/** Deadlocks PostgreSQL has detected in the run's database so far. */
async function deadlocksSoFar(db: Pool): Promise<number> {
  const { rows } = await db.query<{ deadlocks: string }>('select deadlocks from pg_stat_database where datname = current_database()');
  return Number(rows[0]!.deadlocks);
}

/**
 * Locks a recent open delivery's row and then its endpoint's (the engine takes the endpoint's first), holding each a
 * moment, until `over()`; resolves with how many times PostgreSQL cancelled this side to break a deadlock.
 */
async function provokeDeadlocks(databaseUrl: string, companyId: string, over: () => boolean): Promise<number> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  let cancelled = 0;
  try {
    while (!over()) {
      const { rows } = await client.query<{ id: string; endpoint_id: string }>(
        `select id, endpoint_id from webhook_deliveries where company_id = $1 and status in ('pending', 'retrying') order by created_at desc limit 20`,
        [companyId],
      );
      const delivery = rows[Math.floor(Math.random() * rows.length)];
      if (delivery) {
        try {
          await client.query('begin');
          await client.query('select 1 from webhook_deliveries where id = $1 for update', [delivery.id]);
          await sleep(10);
          await client.query('select 1 from webhook_endpoints where id = $1 for update', [delivery.endpoint_id]);
          await sleep(10);
          await client.query('commit');
        } catch (error) {
          await client.query('rollback');
          if ((error as { code?: string }).code !== '40P01') throw error;
          cancelled += 1;
        }
      }
      await sleep(40);
    }
  } finally {
    await client.end();
  }
  return cancelled;
}

/** One line of the phase's figures. */
export function describeChaos(result: ChaosResult): string {
  const refused = Object.entries(result.refused).map(([status, n]) => `${n} × ${status}`);
  return (
    `${result.accepted} of ${result.offered} accepted${refused.length ? ` (refused ${refused.join(', ')})` : ''}, ${result.delivered} delivered in ${result.seconds.toFixed(1)} s, ` +
    `${result.lost} lost, ${result.receivedTwice} received twice, ${result.cutByKill} sends the kill may have cut; ` +
    `${result.deadlocks.detected} deadlocks detected (${result.deadlocks.inProvoker} cancelled on the provoking side, the rest in the engine, run again); ${result.blows.join('; ')}`
  );
}
