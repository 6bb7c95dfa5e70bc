import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { waitFor } from '../helpers/processes';
import { holdRowLocks } from '../helpers/row-locks';
import { createTenant, startStack, type TestStack } from '../helpers/stack';

/**
 * Issue 61: an event's place among its record's events is taken from its record's counter when its transaction
 * commits (assign_record_seq). A transaction takes its records' counters in one order, by record key, whatever order it
 * wrote its events in (src/delivery/README.md, "Lock order"): two transactions that wrote events of the same records in
 * opposite orders must both commit, not be cancelled by PostgreSQL to break a deadlock.
 */
describe('record counters taken in one order (issue 61)', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack({ worker: false, dispatcher: false });
  });
  afterAll(async () => {
    await stack.close();
  });

  /** Writes an event of each record, in the order given (with the ids given, else new ones), in a transaction left open. */
  async function writing(companyId: string, recordKeys: string[], ids: string[] = recordKeys.map(() => uuidv7())): Promise<Client> {
    const client = new Client({ connectionString: stack.config.databaseUrl });
    await client.connect();
    await client.query('begin');
    for (const [i, recordKey] of recordKeys.entries()) {
      // Dispatched already: the test is about their numbers, not their deliveries.
      await client.query(
        `insert into outbox_events (id, company_id, created_at, updated_at, event_type, data, record_key, dispatched_at)
         values ($1, $2, now(), now(), 'employee.updated', '{}', $3, now())`,
        [ids[i], companyId, recordKey],
      );
    }
    return client;
  }

  const numberedIn = (companyId: string) =>
    stack.em().getConnection().execute<{ id: string; record_key: string; record_seq: string }[]>(
      'select id, record_key, record_seq::text from outbox_events where company_id = ? order by record_key, record_seq',
      [companyId],
    );

  it('numbers the events of a transaction that wrote several records in the order it wrote them, whatever their ids', async () => {
    const { companyId } = await createTenant(stack.orm);
    const [a, b] = [`employee:A-${randomUUID()}`, `employee:B-${randomUUID()}`];
    // Ids that sort against the order of writing, as a writer's own ids may.
    const ids = [uuidv7(), uuidv7(), uuidv7(), uuidv7()].reverse();
    const client = await writing(companyId, [b, a, b, a], ids);
    await client.query('commit');
    await client.end();
    expect(await numberedIn(companyId)).toEqual([
      { id: ids[1], record_key: a, record_seq: '1' },
      { id: ids[3], record_key: a, record_seq: '2' },
      { id: ids[0], record_key: b, record_seq: '1' },
      { id: ids[2], record_key: b, record_seq: '2' },
    ]);
    await stack.em().getConnection().execute('delete from outbox_events where company_id = ?', [companyId]);
  });

  it('commits two transactions that wrote events of the same two records in opposite orders, each record numbered 1, 2', async () => {
    const { companyId } = await createTenant(stack.orm);
    const [a, b] = [`employee:A-${randomUUID()}`, `employee:B-${randomUUID()}`];
    await stack.em().getConnection().execute('insert into record_sequences (company_id, record_key, last_seq) values (?, ?, 0), (?, ?, 0)', [companyId, a, companyId, b]);
    const aThenB = await writing(companyId, [a, b]);
    const bThenA = await writing(companyId, [b, a]);
    // A's counter held: the first commit waits for it before it takes any other; the second takes B (in the order it
    // wrote them) and waits for A behind the first, which would then wait for B.
    const holder = await holdRowLocks(stack.config.databaseUrl, 'select 1 from record_sequences where company_id = $1 and record_key = $2 for update', [companyId, a]);
    const waiting = async (n: number) => (await holder.query('select count(*)::int as n from pg_stat_activity where datname = current_database() and cardinality(pg_blocking_pids(pid)) > 0')).rows[0].n >= n;
    try {
      const first = aThenB.query('commit');
      await waitFor(() => waiting(1), 10_000, 'the first commit to wait for A');
      const second = bThenA.query('commit');
      await waitFor(() => waiting(2), 10_000, 'the second commit to wait');
      await holder.release();
      const settled = await Promise.allSettled([first, second]);
      expect(settled.map((result) => (result.status === 'rejected' ? String(result.reason) : 'committed'))).toEqual(['committed', 'committed']);
    } finally {
      await holder.end();
      await Promise.all([aThenB.end(), bThenA.end()]);
    }
    const numbered = await stack.em().getConnection().execute<{ record_key: string; seqs: string[] }[]>(
      `select record_key, array_agg(record_seq::text order by record_seq) as seqs from outbox_events where company_id = ? group by record_key order by record_key`,
      [companyId],
    );
    expect(numbered).toEqual([
      { record_key: a, seqs: ['1', '2'] },
      { record_key: b, seqs: ['1', '2'] },
    ]);
    // Their data is no employee's: the stack checks every event it holds against its schema when it closes.
    await stack.em().getConnection().execute('delete from outbox_events where company_id = ?', [companyId]);
  }, 60_000);
});
