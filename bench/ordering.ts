import { Pool } from 'pg';
import { parseEncryptionKey } from '../src/config';
import { connectOrm } from '../src/database';
import { type ReceivedRequest, startReceiver, type TestReceiver } from '../test/helpers/https-receiver';
import { eventTemplate, startIsolationProcesses } from './isolation-stack';
import { seedTenant } from './seed';
import type { CompiledProject, NodeProcess, Servers } from './stack';

/**
 * Issue 46's benchmark: what ordering per record costs. One company, one endpoint at a time that answers at once; a
 * backlog of `events` changes to `records` distinct customers (each changed events / records times, the changes of one
 * customer `records` events apart) is committed at once, and the rate its deliveries arrive at is measured, with the
 * endpoint's ordering `none` and `per_record` in turn, `rounds` times each (alternating, so that drift in the machine's
 * load falls on both).
 */
export interface OrderingSettings {
  events: number;
  records: number;
  rounds: number;
  timeoutMs: number;
}

export interface OrderingResult {
  /** Deliveries a second of each round, by ordering. */
  none: number[];
  perRecord: number[];
  /** Per_record rounds: a record's deliveries received out of their commit order; deliveries lost or received twice. */
  outOfOrder: number;
  lost: number;
  duplicates: number;
}

const EVENT_TYPE = 'customer.updated';

export async function orderingPhase(servers: Servers, compiled: CompiledProject, logDir: string, settings: OrderingSettings): Promise<OrderingResult> {
  const processes: NodeProcess[] = [];
  const receivers: TestReceiver[] = [];
  const orm = await connectOrm(servers.databaseUrl, 2);
  const db = new Pool({ connectionString: servers.databaseUrl, max: 4 });
  try {
    const stack = await startIsolationProcesses('ordering', servers, compiled, logDir);
    processes.push(stack.worker, stack.api);
    const company = await seedTenant(orm, parseEncryptionKey(stack.common.ENCRYPTION_KEY), 'Ordering', { keys: 1, projects: 0 });
    await stack.ready();
    const data = await eventTemplate(db, company.companyId);
    const result: OrderingResult = { none: [], perRecord: [], outOfOrder: 0, lost: 0, duplicates: 0 };

    for (let round = 0; round < 2 * settings.rounds; round++) {
      const ordering = round % 2 === 0 ? 'none' : 'per_record';
      const receiver = await startReceiver();
      receivers.push(receiver);
      const endpointId = await stack.register(company.keys[0]!.key, receiver.url, [EVENT_TYPE], { ordering });
      const committedAt = Date.now();
      // One transaction: each event's place among its customer's events is taken at its commit, in the order inserted.
      const { rows: events } = await db.query<{ id: string; customer: number }>(
        `insert into outbox_events (id, company_id, event_type, data, record_key, created_at, updated_at)
         select gen_random_uuid(), $1, $2, $3, 'customer:bench-' || (n % $5), clock_timestamp(), clock_timestamp() from generate_series(0, $4 - 1) n
         returning id, (split_part(record_key, '-', 2))::int as customer`,
        [company.companyId, EVENT_TYPE, JSON.stringify(data), settings.events, settings.records],
      );
      const eventOrder = new Map(events.map((e, i) => [e.id, { customer: e.customer, place: i }]));
      const eventOf = (received: ReceivedRequest) => (JSON.parse(received.body) as { event_id: string }).event_id;
      // Each request's body read once: the receiver answers from this process, which must not keep it waiting.
      const received = new Set<string>();
      let read = 0;
      const deadline = committedAt + settings.timeoutMs;
      while (received.size < settings.events && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        for (; read < receiver.requests.length; read++) received.add(eventOf(receiver.requests[read]!));
      }
      const lastAt = Math.max(committedAt, ...receiver.requests.map((r) => r.receivedAt));
      const rate = received.size / ((lastAt - committedAt) / 1000);
      (ordering === 'none' ? result.none : result.perRecord).push(rate);
      console.log(`Ordering ${ordering}, round ${Math.floor(round / 2) + 1}: ${receiver.requests.length} deliveries of ${settings.events} events in ${((lastAt - committedAt) / 1000).toFixed(1)} s, ${rate.toFixed(1)}/s.`);

      const seen = new Set<string>();
      const lastPlace = new Map<number, number>();
      for (const request of receiver.requests) {
        const eventId = eventOf(request);
        if (seen.has(eventId)) result.duplicates++;
        seen.add(eventId);
        const event = eventOrder.get(eventId);
        if (ordering !== 'per_record' || !event) continue;
        if ((lastPlace.get(event.customer) ?? -1) > event.place) result.outOfOrder++;
        lastPlace.set(event.customer, event.place);
      }
      result.lost += settings.events - seen.size;
      await db.query(`update webhook_endpoints set status = 'disabled' where id = $1`, [endpointId]);
    }
    return result;
  } finally {
    for (const receiver of receivers) await receiver.close();
    await db.end();
    await orm.close();
    for (const proc of processes.reverse()) await proc.stop();
  }
}
