import { performance } from 'node:perf_hooks';
import { Pool } from 'pg';
import { parseEncryptionKey } from '../src/config';
import { connectOrm } from '../src/database';
import { deliveryEnvelope } from '../src/delivery/delivery-body';
import { CompiledTransformation, type Transformation } from '../src/delivery/endpoints/endpoint-transformation';
import { startReceiver, type TestReceiver } from '../test/helpers/https-receiver';
import { eventTemplate, startIsolationProcesses } from './isolation-stack';
import { seedTenant } from './seed';
import type { CompiledProject, NodeProcess, Servers } from './stack';

/**
 * Issue 63's benchmark: what a transformation costs the delivery path. One company, one endpoint at a time that answers
 * at once; a backlog of `events` customer.created events is committed at once, and the rate its deliveries arrive at
 * is measured with the endpoint's transformation TYPICAL (20 fields remapped, a header) and with none, `rounds` times
 * each (alternating, so that drift in the machine's load falls on both). Then one compiled evaluation's median time,
 * in this process, on the same event's envelope.
 */
export interface TransformationSettings {
  events: number;
  rounds: number;
  timeoutMs: number;
  /** Evaluations timed one by one for the median. */
  evaluations: number;
}

export interface TransformationResult {
  /** Deliveries a second of each round. */
  none: number[];
  transformed: number[];
  /** Deliveries of the transformed rounds whose body was not the transformation's, failed (its evaluation), lost: none expected. */
  untransformed: number;
  failed: number;
  lost: number;
  /** One evaluation of the compiled transformation, median and 99th percentile, in microseconds. */
  medianMicros: number;
  p99Micros: number;
}

const EVENT_TYPE = 'customer.created';

/**
 * An ERP's customer import row: 20 fields, renamed, regrouped and a few computed, and a header. Written, as a
 * subscriber's must be, for the fields an event may lack (the seeded customers have no type, e-mail or address):
 * `$uppercase(null)` would fail every delivery.
 */
export const TYPICAL: Transformation = {
  body: `{
    "CustomerId": data.id, "CustomerName": data.name, "Category": data.type ? $uppercase(data.type) : "UNSPECIFIED", "Email": data.email,
    "Phone": data.phone, "Street": data.billing_address.address_line_1, "Street2": data.billing_address.address_line_2,
    "City": data.billing_address.city, "Region": data.billing_address.province, "PostalCode": data.billing_address.postal_code,
    "Country": data.billing_address.country, "CreatedAt": data.created_at, "CreatedBy": data.created_by,
    "EventId": event_id, "EventType": event_type, "ChangeType": $substringAfter(event_type, "."), "OccurredAt": timestamp,
    "CompanyId": company_id, "Source": "construction-integration", "DisplayName": data.name & (data.type ? " (" & data.type & ")" : "")
  }`,
  headers: { 'X-Customer-Id': 'data.id' },
};

/** Deliveries of the endpoint failed for good (a transformation that fails fails its delivery at once). */
async function failedCount(db: Pool, endpointId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from webhook_deliveries where endpoint_id = $1 and status = 'failed'`, [endpointId]);
  return rows[0]!.n;
}

/**
 * Commits `count` events at once and waits for their deliveries, until each arrived or failed: the rate they arrived
 * at, their bodies, and how many failed.
 */
async function round(
  db: Pool,
  company: { companyId: string; endpointId: string },
  data: Record<string, unknown>,
  receiver: TestReceiver,
  settings: TransformationSettings,
): Promise<{ rate: number; bodies: string[]; failed: number }> {
  const { companyId, endpointId } = company;
  const committedAt = Date.now();
  await db.query(
    `insert into outbox_events (id, company_id, event_type, data, created_at, updated_at)
     select gen_random_uuid(), $1, $2, $3, clock_timestamp(), clock_timestamp() from generate_series(1, $4)`,
    [companyId, EVENT_TYPE, JSON.stringify(data), settings.events],
  );
  const deadline = committedAt + settings.timeoutMs;
  let failed = 0;
  for (let tick = 1; receiver.requests.length + failed < settings.events && Date.now() < deadline; tick++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    if (tick % 10 === 0) failed = await failedCount(db, endpointId);
  }
  const lastAt = Math.max(committedAt + 1, ...receiver.requests.map((r) => r.receivedAt));
  return { rate: receiver.requests.length / ((lastAt - committedAt) / 1000), bodies: receiver.requests.map((r) => r.body), failed: await failedCount(db, endpointId) };
}

/** One compiled evaluation's median and 99th percentile (µs), on a customer.created envelope made of `data`. */
async function evaluationTimes(data: Record<string, unknown>, companyId: string, evaluations: number): Promise<{ median: number; p99: number }> {
  const compiled = new CompiledTransformation(TYPICAL, { timeoutMs: 1000, maxBytes: 262_144 });
  const { body } = deliveryEnvelope({ id: '00000000-0000-4000-8000-000000000000', companyId, eventType: EVENT_TYPE, occurredAt: new Date(), data, catalogData: null }, 'A');
  const url = 'https://erp.example.com/import';
  for (let warm = 0; warm < 200; warm++) await compiled.run(body, url);
  const times: number[] = [];
  for (let n = 0; n < evaluations; n++) {
    const started = performance.now();
    await compiled.run(body, url);
    times.push((performance.now() - started) * 1000);
  }
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(times.length / 2)]!, p99: times[Math.floor(times.length * 0.99)]! };
}

export async function transformationPhase(servers: Servers, compiled: CompiledProject, logDir: string, settings: TransformationSettings): Promise<TransformationResult> {
  const processes: NodeProcess[] = [];
  const receivers: TestReceiver[] = [];
  const orm = await connectOrm(servers.databaseUrl, 2);
  const db = new Pool({ connectionString: servers.databaseUrl, max: 4 });
  try {
    const stack = await startIsolationProcesses('transformations', servers, compiled, logDir);
    processes.push(stack.worker, stack.api);
    const company = await seedTenant(orm, parseEncryptionKey(stack.common.ENCRYPTION_KEY), 'Transformations', { keys: 1, projects: 0 });
    await stack.ready();
    const data = await eventTemplate(db, company.companyId);
    const result: TransformationResult = { none: [], transformed: [], untransformed: 0, failed: 0, lost: 0, medianMicros: 0, p99Micros: 0 };
    for (let turn = 0; turn < 2 * settings.rounds; turn++) {
      const transformed = turn % 2 === 1;
      const receiver = await startReceiver();
      receivers.push(receiver);
      const endpointId = await stack.register(company.keys[0]!.key, receiver.url, [EVENT_TYPE], { api_key_id: null, ...(transformed ? { transformation: TYPICAL } : {}) });
      const { rate, bodies, failed } = await round(db, { companyId: company.companyId, endpointId }, data, receiver, settings);
      (transformed ? result.transformed : result.none).push(rate);
      console.log(`Transformation ${transformed ? 'typical' : 'none'}, round ${Math.floor(turn / 2) + 1}: ${bodies.length} deliveries of ${settings.events} events (${failed} failed), ${rate.toFixed(1)}/s.`);
      result.failed += failed;
      result.lost += Math.max(0, settings.events - bodies.length - failed);
      if (transformed) result.untransformed += bodies.filter((body) => (JSON.parse(body) as { CustomerId?: string }).CustomerId !== data.id).length;
      await db.query(`update webhook_endpoints set status = 'disabled' where id = $1`, [endpointId]);
    }
    const times = await evaluationTimes(data, company.companyId, settings.evaluations);
    return { ...result, medianMicros: times.median, p99Micros: times.p99 };
  } finally {
    for (const receiver of receivers) await receiver.close();
    await db.end();
    await orm.close();
    for (const proc of processes.reverse()) await proc.stop();
  }
}
