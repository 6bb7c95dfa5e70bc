import type { Client as TemporalClient } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import type { TestReceiver } from '../test/helpers/https-receiver';
import type { DeliveredEvent } from './delivery-timeline';
import type { Tenant } from './seed';
import { summary } from './http-load';

/**
 * The Temporal ceiling of a durable delivery: workflows of one no-op activity on the same server, `inFlight`
 * at a time for `seconds`. Returns completions per second.
 */
export async function noopWorkflowRate(client: TemporalClient, taskQueue: string, seconds: number, inFlight = 50): Promise<number> {
  const until = Date.now() + seconds * 1000;
  let completed = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (Date.now() < until) {
        await client.workflow.execute('noopWorkflow', { taskQueue, workflowId: `noop/${randomUUID()}`, args: [] });
        completed += 1;
      }
    }),
  );
  return completed / ((Date.now() - started) / 1000);
}

/**
 * A DeliveryProbe for `tenant`: an endpoint of its at `receiver` for customer.created (registered through the api at
 * `apiUrl`), each event a copy of the customer.created its seeding made. Also the endpoint's id.
 */
export async function probeDeliveriesOf(db: Pool, apiUrl: string, tenant: Tenant, receiver: TestReceiver): Promise<{ probe: DeliveryProbe; endpointId: string }> {
  const endpoint = await fetch(`${apiUrl}/api/v1/webhook-endpoints`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': tenant.keys[0]!.key },
    body: JSON.stringify({ url: receiver.url, event_types: ['customer.created'] }),
  });
  if (endpoint.status !== 201) throw new Error(`endpoint registration answered ${endpoint.status}: ${await endpoint.text()}`);
  const [template] = (await db.query(`select data from outbox_events where company_id = $1 and event_type = 'customer.created' limit 1`, [tenant.companyId])).rows;
  if (!template) throw new Error('the seeded company has no customer.created event to copy');
  const probe = new DeliveryProbe(db, { companyId: tenant.companyId, eventType: 'customer.created', data: template.data }, receiver);
  return { probe, endpointId: ((await endpoint.json()) as { id: string }).id };
}

/** What one Temporal server sustains: its no-op workflow ceiling, and deliveries until their latency bends against it. */
export interface SustainedDeliveries {
  /** No-op workflows completed a second, 50 in flight. */
  ceiling: number;
  /** The highest offered rate of deliveries a second that was kept up with. */
  sustained: number;
  /** Each offered rate and its commit → receipt p50, as printed. */
  steps: string[];
  /** CPU milliseconds per no-op workflow during the ceiling, of each part `cpuSeconds` names (the Temporal server, its database). */
  cpuMsPerWorkflow: Record<string, number>;
  /** The whole machine's busy cores on average during the ceiling (/proc/stat): near all of them, the ceiling is CPU. */
  machineCores: number;
}

/** Busy and total jiffies of all cores, from the first line of /proc/stat (user nice system idle iowait irq softirq steal). */
function machineTicks(): { busy: number; total: number } {
  const ticks = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = ticks.reduce((sum, n) => sum + n, 0);
  return { busy: total - ticks[3]! - ticks[4]!, total };
}

const rate = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1));

/**
 * Phase 6's measurement, on whichever server `temporal` and the service's worker talk to: the no-op workflow ceiling,
 * then deliveries at rising fractions of it (each step drained before the next) until one is not kept up with: an
 * event not received, a backlog growing within the step, or the latency bent upwards. `around` wraps each step (the
 * profile windows); `cpuSeconds` reads the CPU time used so far by the parts of the Temporal server, to tell what a
 * workflow costs it.
 */
export async function sustainedDeliveryRate(
  temporal: TemporalClient,
  noopQueue: string,
  probe: DeliveryProbe,
  settings: {
    ceilingSeconds: number;
    stepSeconds: number;
    around?: <T>(label: string, work: () => Promise<T>) => Promise<T>;
    cpuSeconds?: () => Record<string, number>;
  },
): Promise<SustainedDeliveries> {
  const around = settings.around ?? ((_label, work) => work());
  const cpuBefore = settings.cpuSeconds?.() ?? {};
  const machineBefore = machineTicks();
  const started = Date.now();
  const ceiling = await noopWorkflowRate(temporal, noopQueue, settings.ceilingSeconds);
  const workflows = ceiling * ((Date.now() - started) / 1000);
  const cpuAfter = settings.cpuSeconds?.() ?? {};
  const machineAfter = machineTicks();
  const machineCores = ((machineAfter.busy - machineBefore.busy) / Math.max(1, machineAfter.total - machineBefore.total)) * os.cpus().length;
  const cpuMsPerWorkflow = Object.fromEntries(Object.entries(cpuAfter).map(([part, seconds]) => [part, (1000 * (seconds - (cpuBefore[part] ?? 0))) / Math.max(1, workflows)]));
  let sustained = 0;
  let baseline: number | null = null;
  const steps: string[] = [];
  for (const fraction of [0.25, 0.5, 0.75, 1, 1.25]) {
    const offered = ceiling * fraction;
    const step = await around(`6. deliveries at ${rate(offered)}/s`, () => probe.run(offered, settings.stepSeconds));
    baseline ??= step.latency.p50;
    steps.push(`${rate(offered)}/s: p50 ${rate(step.latency.p50)} ms${step.fallingBehind ? ', falling behind' : ''}`);
    // Kept up: every event delivered, no backlog growing within the step, and the latency not bent upwards.
    const bent = step.received < step.sent || step.fallingBehind || step.latency.p50 > Math.max(2 * baseline, baseline + 500);
    if (bent) break;
    sustained = offered;
  }
  return { ceiling, sustained, steps, cpuMsPerWorkflow, machineCores };
}

/** An event as the service would have committed it, for the outbox (a copy of a real one's data). */
export interface EventTemplate {
  companyId: string;
  eventType: string;
  data: unknown;
}

/**
 * Commits outbox events and times each from its commit to the first receipt of its delivery: what a
 * subscriber sees of a change. Receipts are matched by the body's event_id; X-Webhook-ID tells a redelivery.
 */
export class DeliveryProbe {
  private readonly committedAt = new Map<string, number>();
  private readonly receivedAt = new Map<string, number>();
  private readonly receiptsById = new Map<string, number>();

  constructor(
    private readonly db: Pool,
    private readonly template: EventTemplate,
    receiver: TestReceiver,
  ) {
    receiver.respondWith((request) => {
      const eventId = (JSON.parse(request.body) as { event_id: string }).event_id;
      if (!this.receivedAt.has(eventId)) this.receivedAt.set(eventId, request.receivedAt);
      const webhookId = String(request.headers['x-webhook-id']);
      this.receiptsById.set(webhookId, (this.receiptsById.get(webhookId) ?? 0) + 1);
      return { status: 200, body: '{"received":true}', headers: { 'Content-Type': 'application/json' } };
    });
  }

  /**
   * Commits `perSecond` events a second for `seconds`, paced, then waits until each was received (up to
   * `drainMs`). `falling behind`: the last quarter of the events took markedly longer than the first (a backlog
   * grew).
   */
  async run(
    perSecond: number,
    seconds: number,
    drainMs = 60_000,
  ): Promise<{ sent: number; received: number; perSecond: number; fallingBehind: boolean; latency: { p50: number; p99: number; max: number } }> {
    const count = Math.max(1, Math.round(perSecond * seconds));
    const ids: string[] = [];
    const started = Date.now();
    const commits: Promise<void>[] = [];
    for (let i = 0; i < count; i++) {
      const due = started + (i * 1000) / perSecond;
      if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
      const id = uuidv7();
      ids.push(id);
      commits.push(this.commit(id));
    }
    await Promise.all(commits);
    const deadline = Date.now() + drainMs;
    while (ids.some((id) => !this.receivedAt.has(id)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const received = ids.filter((id) => this.receivedAt.has(id));
    const lastReceipt = Math.max(...received.map((id) => this.receivedAt.get(id)!));
    const latencyOf = (id: string) => this.receivedAt.get(id)! - this.committedAt.get(id)!;
    const quarter = Math.max(1, Math.floor(received.length / 4));
    const first = summary(received.slice(0, quarter).map(latencyOf)).p50;
    const last = summary(received.slice(-quarter).map(latencyOf)).p50;
    return {
      sent: count,
      received: received.length,
      perSecond: received.length / Math.max(0.001, (lastReceipt - started) / 1000),
      fallingBehind: last > 2 * first + 200,
      latency: summary(received.map(latencyOf)),
    };
  }

  /** The events committed from `from` until `to` (ms since the epoch): how many, and the latencies of those received so far. */
  committedBetween(from: number, to: number): { sent: number; latencies: number[] } {
    const ids = [...this.committedAt].filter(([, at]) => at >= from && at < to).map(([id]) => id);
    return { sent: ids.length, latencies: ids.filter((id) => this.receivedAt.has(id)).map((id) => this.receivedAt.get(id)! - this.committedAt.get(id)!) };
  }

  /** Waits until every event committed so far was received, or `timeoutMs` passed. */
  async drained(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while ([...this.committedAt.keys()].some((id) => !this.receivedAt.has(id)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
  }

  /** Every event committed so far: how many were never received, and receipts beyond one per delivery. */
  tally(): { sent: number; lost: number; duplicates: number } {
    const lost = [...this.committedAt.keys()].filter((id) => !this.receivedAt.has(id)).length;
    const duplicates = [...this.receiptsById.values()].reduce((sum, n) => sum + n - 1, 0);
    return { sent: this.committedAt.size, lost, duplicates };
  }

  /** Commits one event and waits for its receipt (up to `timeoutMs`): what bench/delivery-timeline.ts follows. */
  async single(timeoutMs = 30_000): Promise<DeliveredEvent> {
    const eventId = uuidv7();
    await this.commit(eventId);
    const deadline = Date.now() + timeoutMs;
    while (!this.receivedAt.has(eventId)) {
      if (Date.now() > deadline) throw new Error(`event ${eventId} was not received within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return { eventId, committedAt: this.committedAt.get(eventId)!, receivedAt: this.receivedAt.get(eventId)! };
  }

  private async commit(id: string): Promise<void> {
    await this.db.query(
      `insert into outbox_events (id, company_id, event_type, data, created_at, updated_at) values ($1, $2, $3, $4, now(), now())`,
      [id, this.template.companyId, this.template.eventType, JSON.stringify(this.template.data)],
    );
    this.committedAt.set(id, Date.now());
  }
}
