import { Client } from 'pg';
import { naturalKey } from '../../src/domain/natural-keys';
import { projectCreationWorkflowId } from '../../src/domain/work/project-creation';
import { outboxOf, projectCounts, projectData } from '../helpers/fixtures';
import { spawnEntryPoint, stopProcess, waitFor, workerStarted } from '../helpers/processes';
import { createTenant, envelope, processEnvOf, sendInbound, startStack, testConfig, type TestStack } from '../helpers/stack';

/**
 * The worker is killed with SIGKILL while project.created runs: inside the transaction that has written the
 * customer, location and contacts and waits to write the project. Nothing of it is committed; a new worker
 * finishes the operation once.
 */
describe('worker killed during project.created', () => {
  let stack: TestStack;

  beforeAll(async () => {
    // The API answers 202 after 2 s instead of waiting out the whole recovery.
    stack = await startStack({ worker: false, config: await testConfig({ INBOUND_WAIT_MS: '2000' }) });
  });
  afterAll(() => stack.close());

  it('finishes exactly once on the restarted worker', async () => {
    const tenant = await createTenant(stack.orm, ['webhooks:inbound']);
    const workerEnv = processEnvOf(stack);

    // Holds the advisory lock the project takes on (company, project code): the creation then waits inside
    // its transaction, with the customer, location and contacts written but not committed.
    const lockKey = naturalKey(tenant.companyId, 'projects', 'CRASH-1');
    const blocker = new Client({ connectionString: stack.config.databaseUrl });
    await blocker.connect();
    await blocker.query('select pg_advisory_lock(hashtextextended($1, 0))', [lockKey]);

    const first = spawnEntryPoint('worker/main.ts', workerEnv);
    let second: ReturnType<typeof spawnEntryPoint> | undefined;
    try {
      await workerStarted(first, 'first');
      const responsePromise = sendInbound(stack.baseUrl, tenant, envelope('project.created', projectData('CRASH-1')));

      await waitFor(
        async () => {
          const { rows } = await blocker.query(
            "select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like '%pg_advisory_xact_lock%' and query like $1",
            [`%${tenant.companyId}%`],
          );
          return rows.length > 0;
        },
        30_000,
        'the creation to wait for the project lock',
      );
      // The transaction holds the locks of the customer, the location and both contacts it has written...
      const { rows: held } = await blocker.query(
        `select count(*)::int as n from pg_locks
          where locktype = 'advisory' and granted and pid <> pg_backend_pid()
            and database = (select oid from pg_database where datname = current_database())`,
      );
      expect(held[0].n).toBe(4);
      // ...and none of it is visible: it is not committed.
      expect(await projectCounts(stack, tenant.companyId)).toEqual({ customers: 0, locations: 0, contacts: 0, projects: 0 });
      await stopProcess(first, 'SIGKILL');
      await blocker.query('select pg_advisory_unlock(hashtextextended($1, 0))', [lockKey]);

      // The killed transaction is rolled back: nothing half-created.
      await waitFor(
        async () => (await blocker.query("select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'")).rows.length === 0,
        30_000,
        'the killed transaction to end',
      );
      expect(await projectCounts(stack, tenant.companyId)).toEqual({ customers: 0, locations: 0, contacts: 0, projects: 0 });
      const response = await responsePromise;
      expect(response.status).toBe(202);
      expect(response.body).toEqual({ success: true, message: expect.stringContaining('still being created'), event_id: expect.any(String), record_id: expect.any(String) });

      second = spawnEntryPoint('worker/main.ts', workerEnv);

      await workerStarted(second, 'second');
      const handle = stack.temporal.workflow.getHandle(projectCreationWorkflowId(tenant.companyId, 'CRASH-1'));
      const result = await handle.result();
      expect(result).toEqual({ projectId: response.body.record_id, eventId: response.body.event_id, created: true });

      expect(await projectCounts(stack, tenant.companyId)).toEqual({ customers: 1, locations: 1, contacts: 2, projects: 1 });
      const events = await outboxOf(stack, tenant.companyId);
      expect(events.map((e) => e.event_type).sort()).toEqual(['contact.created', 'contact.created', 'customer.created', 'location.created', 'project.created']);
      expect(events.find((e) => e.event_type === 'project.created')!.id).toBe(response.body.event_id);
      console.log(
        `Worker SIGKILL during project.created: 1 request accepted (202 while the worker was down), nothing committed before the kill; ` +
          `afterwards 1 customer, 1 location, 2 contacts, 1 project and ${events.length} events, each once`,
      );
    } finally {
      await blocker.end().catch(() => undefined);
      await stopProcess(first, 'SIGKILL');
      if (second) await stopProcess(second);
    }
  }, 300_000);
});
