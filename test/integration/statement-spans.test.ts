import { context, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { Client, type QueryConfig } from 'pg';
import { randomUUID } from 'node:crypto';
import { inSpan } from '../../src/observability/spans';
import { UNTRACED } from '../../src/observability/statement-spans';
import { type RunningTracing, startTracing } from '../../src/observability/tracing';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../helpers/otlp-receiver';
import { createTestDatabase } from '../helpers/stack';

const CLIENT = 3;

/**
 * The statements' spans (src/observability/statement-spans.ts) as a collector gets them, from a real PostgreSQL:
 * one child span per statement sent under a recorded span, in both forms pg is called in, with the statement's shape
 * and never its values.
 */
describe('statement spans', () => {
  let otlp: OtlpReceiver;
  let tracing: RunningTracing;
  let db: Client;
  let databaseName: string;

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    tracing = await startTracing({ protocol: 'http/protobuf', serviceName: 'statement-spans-test', url: otlp.url });
    const url = await createTestDatabase();
    databaseName = new URL(url).pathname.slice(1);
    db = new Client({ connectionString: url });
    await db.connect();
    await db.query('create temporary table customers (name text primary key)');
  });

  afterAll(async () => {
    await db?.end();
    await tracing?.stop();
    await otlp?.close();
  });

  /** Runs `work` under a span of its own and returns the spans exported as that span's children. */
  async function childrenOf(work: () => Promise<unknown>): Promise<ReceivedSpan[]> {
    let parentSpanId = '';
    await inSpan('parent', {}, async (span) => {
      parentSpanId = span.spanContext().spanId;
      await work();
    });
    await tracing.flush();
    return otlp.spans.filter((span) => span.parentSpanId === parentSpanId);
  }

  it('makes a client span per statement, a child of the active span, with the statement without its values', async () => {
    const secret = `secret-${randomUUID()}`;
    const [span, ...others] = await childrenOf(() => db.query(`select '${secret}' as token, 42 as answer where $1::text is not null`, [secret]));
    expect(others).toEqual([]);
    expect(span).toMatchObject({
      name: `pg.query:SELECT ${databaseName}`,
      kind: CLIENT,
      statusCode: 0,
      attributes: { 'db.system': 'postgresql', 'db.name': databaseName, 'db.statement': `select ? as token, ? as answer where $1::text is not null`, 'net.peer.name': expect.any(String), 'net.peer.port': expect.anything() },
    });
    expect(JSON.stringify(span)).not.toContain(secret);
  });

  it('ends the span of a statement whose result goes to a callback (how knex calls pg), and hands the result on', async () => {
    let rows: unknown[] = [];
    const [span] = await childrenOf(
      () =>
        new Promise<void>((resolve, reject) =>
          db.query({ text: 'select 1 as one' }, (error: Error | null, result: { rows: unknown[] }) => {
            if (error) reject(error);
            rows = result.rows;
            resolve();
          }),
        ),
    );
    expect(rows).toEqual([{ one: 1 }]);
    expect(span).toMatchObject({ name: `pg.query:SELECT ${databaseName}`, attributes: { 'db.statement': 'select ? as one' } });
    expect(BigInt(span!.endTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(span!.startTimeUnixNano));
  });

  it('marks a failed statement an error by its SQLSTATE, without the message that quotes the values', async () => {
    const name = `Acme ${randomUUID()}`;
    await db.query('insert into customers (name) values ($1)', [name]);
    const [span] = await childrenOf(() => expect(db.query(`insert into customers (name) values ('${name}')`)).rejects.toThrow(/duplicate key/));
    expect(span).toMatchObject({ name: `pg.query:INSERT ${databaseName}`, statusCode: 2, attributes: { 'error.type': '23505', 'db.statement': 'insert into customers (name) values (?)' } });
    expect(JSON.stringify(span)).not.toContain(name);
  });

  it('makes none for transaction control, nor for statements outside a trace', async () => {
    const spans = await childrenOf(async () => {
      await db.query('BEGIN');
      await db.query('select 2');
      await db.query('COMMIT');
      await context.with(ROOT_CONTEXT, () => db.query('select 3'));
    });
    expect(spans.map((span) => span.attributes['db.statement'])).toEqual(['select ?']);
    expect(trace.getSpan(context.active())).toBeUndefined();
  });

  it('makes none for a statement marked untraced (the admission), prepared or not', async () => {
    const spans = await childrenOf(async () => {
      await db.query({ name: 'untraced-bookkeeping', text: 'select $1::int as six', values: [6], [UNTRACED]: true } as QueryConfig);
      await db.query({ text: 'select 7', [UNTRACED]: true } as QueryConfig);
      await db.query('select 8');
    });
    expect(spans.map((span) => span.attributes['db.statement'])).toEqual(['select ?']);
  });

  it('is taken off pg when tracing stops', async () => {
    const traced = Client.prototype.query;
    await tracing.stop();
    expect(Client.prototype.query).not.toBe(traced);
    const before = otlp.spans.length;
    await inSpan('after stop', {}, () => db.query('select 4'));
    expect(otlp.spans.length).toBe(before);
    tracing = await startTracing({ protocol: 'http/protobuf', serviceName: 'statement-spans-test', url: otlp.url });
    expect(Client.prototype.query).not.toBe(traced);
    expect(await childrenOf(() => db.query('select 5'))).toHaveLength(1);
  });
});
