import type { EntityManager } from '@mikro-orm/postgresql';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { connectOrm } from '../src/database';
import { createCompany } from '../src/domain/accounts/api-keys-service';
import type { DeliveryWorkflows } from '../src/delivery/delivery-workflows';
import { deliveryEnvelope } from '../src/delivery/delivery-body';
import { checkFilter, compileFilter } from '../src/delivery/endpoints/endpoint-filter';
import { OutboxDispatcher } from '../src/delivery/outbox/dispatcher';
import { WebhookEndpoint } from '../src/delivery/endpoints/webhook-endpoint.entity';
import type { EndpointFilter } from '../src/generated/schemas';
import { createLogger } from '../src/logger';
import { PROJECT_ROOT } from '../src/paths';

/**
 * Phase 15 (issue 47): what an endpoint's content filter costs the outbox dispatcher. The dispatcher runs here, in this
 * process, on the run's PostgreSQL, with its runs' starts stubbed (each delivery written is marked delivered at once, so
 * that no endpoint runs out of room): the phase measures fan-out alone, which is where a filter is evaluated. The same
 * events go through it with no filter on any endpoint and with FILTER (10 conditions, every one of which each event
 * meets, so that all are evaluated and the deliveries are the same), in rounds taking turns; and the compiled filter is
 * timed alone on one body.
 */

/** Ten conditions on a customer.created body, each met by the example event: evaluated in full every time. */
export const FILTER: NonNullable<EndpointFilter> = {
  and: [
    { path: 'event_type', eq: 'customer.created' },
    { path: 'company_id', exists: true },
    { path: 'timestamp', gte: '2020-01-01T00:00:00Z' },
    { path: 'data.name', exists: true },
    { path: 'data.type', in: ['commercial', 'residential', 'industrial'] },
    { path: 'data.email', ne: null },
    { path: 'data.billing_address.country', eq: 'Canada' },
    { path: 'data.billing_address.province', nin: ['QC', 'NB'] },
    { path: 'data.created_at', lt: '2030-01-01' },
    { not: { path: 'data.phone', eq: '' } },
  ],
};

export interface FilterCostSettings {
  companies: number;
  endpointsPerCompany: number;
  /** Events committed per round and variant, spread over the companies. */
  events: number;
  rounds: number;
}

export interface FilterRound {
  filtered: boolean;
  events: number;
  deliveries: number;
  seconds: number;
  /** The dispatcher's (this process's) CPU per event. */
  cpuMicrosPerEvent: number;
}

export interface FilterCost {
  settings: FilterCostSettings;
  rounds: FilterRound[];
  /** One evaluation of the compiled FILTER on one body, in nanoseconds; and compiling it once, in microseconds. */
  evaluationNs: number;
  compileMicros: number;
}

const exampleData = () =>
  (JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'schemas/events/a/customer.created.json'), 'utf8')) as { examples: Record<string, unknown>[] }).examples[0]!;

/** Runs the phase on a migrated database of its own (the run's servers), leaving its rows there. */
export async function filterCostPhase(databaseUrl: string, settings: FilterCostSettings): Promise<FilterCost> {
  checkFilter(FILTER);
  const orm = await connectOrm(databaseUrl, 8);
  const db = new Pool({ connectionString: databaseUrl, max: 2 });
  try {
    const em = () => orm.em.fork() as EntityManager;
    const companies: string[] = [];
    for (let c = 0; c < settings.companies; c++) {
      const company = await createCompany(em(), `filter bench ${c}`);
      companies.push(company.id);
      const fork = em();
      for (let e = 0; e < settings.endpointsPerCompany; e++) {
        fork.create(WebhookEndpoint, { company: company.id, url: `https://receiver-${e}.example/hook`, eventTypes: ['customer.*'], secretSealed: 'unused: nothing is sent' });
      }
      await fork.flush();
    }
    const written: string[] = [];
    const deliveryWorkflows: DeliveryWorkflows = {
      start: async (delivery) => {
        written.push(delivery.input.deliveryId);
        return true;
      },
      requestRerun: () => Promise.reject(new Error('not in this phase')),
      closedWithin: async () => true,
      wake: async () => [],
      endpointEnded: async () => undefined,
      startRecovery: async () => undefined,
    };
    const dispatcher = new OutboxDispatcher({
      orm,
      deliveryWorkflows,
      databaseUrl,
      pollMs: 60_000,
      logger: createLogger('warn'),
      maxRunsPerEndpoint: 1000,
      maxRunsBeforeFirstDelivery: 1000,
      maxInFlightPerEndpoint: 1000,
      // None of its endpoints has a transformation.
      transformationLimits: { timeoutMs: 200, maxBytes: 262_144 },
    });
    const data = JSON.stringify(exampleData());

    const round = async (filtered: boolean): Promise<FilterRound> => {
      // Each round on empty tables: rows left behind by the one before would slow the next.
      await db.query('truncate webhook_deliveries, outbox_events cascade');
      // Established endpoints, each with a delivery delivered (a webhook.test): a new one would have one run, the rest of
      // its deliveries deferred, and the phase measures fan-out to endpoints that take them.
      await db.query(
        `insert into webhook_deliveries (id, company_id, created_at, updated_at, endpoint_id, event_type, payload, is_test, status, attempt_count, delivered_at)
         select gen_random_uuid(), e.company_id, now(), now(), e.id, 'webhook.test', '{}', true, 'delivered', 1, now() from webhook_endpoints e where e.company_id = any($1::uuid[])`,
        [companies],
      );
      await db.query('update webhook_endpoints set filter = $1, updated_at = now() where company_id = any($2::uuid[])', [filtered ? JSON.stringify(FILTER) : null, companies]);
      const ids = Array.from({ length: settings.events }, () => uuidv7());
      await db.query(
        `insert into outbox_events (id, company_id, event_type, data, created_at, updated_at)
         select e.id, ($2::uuid[])[1 + (e.n - 1) % array_length($2::uuid[], 1)], 'customer.created', $3::jsonb, now(), now()
           from unnest($1::uuid[]) with ordinality as e(id, n)`,
        [ids, companies, data],
      );
      await db.query('analyze outbox_events');
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      let deliveries = 0;
      for (;;) {
        const dispatched = await dispatcher.dispatchBatch();
        // What a run would do first: the delivery leaves the endpoint's pipeline (one statement per batch).
        const started = written.splice(0);
        deliveries += started.length;
        if (started.length) await db.query(`update webhook_deliveries set status = 'delivered', delivered_at = now() where id = any($1::uuid[])`, [started]);
        if (dispatched === 0 && (await db.query('select 1 from outbox_events where dispatched_at is null limit 1')).rowCount === 0) break;
      }
      const seconds = (performance.now() - started) / 1000;
      const cpu = process.cpuUsage(cpuBefore);
      return { filtered, events: settings.events, deliveries, seconds, cpuMicrosPerEvent: (cpu.user + cpu.system) / settings.events };
    };

    // A warm-up of each, not counted: the statements are prepared and the code compiled.
    await round(false);
    await round(true);
    const rounds: FilterRound[] = [];
    // In turns, each going first every other time: whatever the machine does meanwhile falls on both alike.
    for (let r = 0; r < settings.rounds; r++) {
      const order = r % 2 === 0 ? [false, true] : [true, false];
      for (const filtered of order) rounds.push(await round(filtered));
    }
    return { settings, rounds, ...timeAlone() };
  } finally {
    await db.end();
    await orm.close();
  }
}

/** The compiled FILTER on one body, timed alone: a million evaluations, and the compiling. */
function timeAlone(): { evaluationNs: number; compileMicros: number } {
  const body = deliveryEnvelope(
    { id: uuidv7(), companyId: uuidv7(), eventType: 'customer.created', occurredAt: new Date(), data: exampleData(), catalogData: null },
    'A',
  ).body;
  const compileStarted = performance.now();
  const compiles = 10_000;
  for (let i = 0; i < compiles; i++) compileFilter(FILTER);
  const compileMicros = ((performance.now() - compileStarted) * 1000) / compiles;
  const match = compileFilter(FILTER);
  const evaluations = 1_000_000;
  let matched = 0;
  const started = performance.now();
  for (let i = 0; i < evaluations; i++) if (match(body)) matched++;
  const evaluationNs = ((performance.now() - started) * 1e6) / evaluations;
  if (matched !== evaluations) throw new Error('the bench filter must match its event');
  return { evaluationNs, compileMicros };
}
