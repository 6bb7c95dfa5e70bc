import type { Client as TemporalClient } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import type { TestReceiver } from '../test/helpers/https-receiver';
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

  private async commit(id: string): Promise<void> {
    await this.db.query(
      `insert into outbox_events (id, company_id, event_type, data, created_at, updated_at) values ($1, $2, $3, $4, now(), now())`,
      [id, this.template.companyId, this.template.eventType, JSON.stringify(this.template.data)],
    );
    this.committedAt.set(id, Date.now());
  }
}
