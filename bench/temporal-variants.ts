/**
 * What a delivery workflow's shape costs on this Temporal server, measured in one process that hosts both the
 * worker and the client (eager start needs them together): no-op workflows started as the dispatcher starts
 * deliveries, with its search attributes, with eager start. Prints one JSON line per variant.
 */
import { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { COMPANY_ID, DELIVERY_STATUS, ENDPOINT_ID, EVENT_TYPE } from '../workflows/search-attributes';
import { summary } from './http-load';
import { treeCpuSeconds } from './proc';

const SECONDS = Number(process.env.VARIANT_SECONDS ?? 10);
/** The Temporal server's processes, when the caller knows them: each variant's server CPU per workflow is reported. */
const SERVER_PIDS = (process.env.SERVER_PIDS ?? '').split(',').filter(Boolean).map(Number);
const serverCpuSeconds = () => treeCpuSeconds(SERVER_PIDS);

async function main() {
  const taskQueue = `variants-${randomUUID()}`;
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS! });
  const worker = await Worker.create({ connection, taskQueue, workflowsPath: require.resolve('./noop-workflow'), activities: { noop: async () => undefined } });
  const running = worker.run();
  const client = new Client({ connection });
  const deliveryAttributes = () => ({
    typedSearchAttributes: [
      { key: COMPANY_ID, value: randomUUID() },
      { key: ENDPOINT_ID, value: randomUUID() },
      { key: EVENT_TYPE, value: 'customer.created' },
      { key: DELIVERY_STATUS, value: 'pending' },
    ],
    staticSummary: 'customer.created → https://hooks.example.com/x',
  });
  const local = (name: string, options: { status: boolean; patch: boolean }, eager = false) => ({
    name,
    start: () => client.workflow.execute('localWorkflow', { taskQueue, workflowId: `v/${randomUUID()}`, args: [options], requestEagerStart: eager, ...deliveryAttributes() }),
  });
  const variants: { name: string; start(): Promise<unknown> }[] = [
    { name: 'one no-op activity', start: () => client.workflow.execute('noopWorkflow', { taskQueue, workflowId: `v/${randomUUID()}` }) },
    {
      name: '+ the four search attributes at start and the status upsert at the end (a delivery before issue 42)',
      start: () => client.workflow.execute('noopWithStatusWorkflow', { taskQueue, workflowId: `v/${randomUUID()}`, ...deliveryAttributes() }),
    },
    {
      name: '+ eager start (worker and dispatcher share the connection)',
      start: () => client.workflow.execute('noopWithStatusWorkflow', { taskQueue, workflowId: `v/${randomUUID()}`, requestEagerStart: true, ...deliveryAttributes() }),
    },
    local('one workflow task, its work a local activity; the search attributes at start', { status: false, patch: false }),
    local('+ the status upsert at the end', { status: true, patch: false }),
    local('+ a patch marker (which upserts TemporalChangeVersion)', { status: true, patch: true }),
    local('one workflow task with the status upsert, eager start (a delivery since issue 42)', { status: true, patch: false }, true),
  ];
  for (const variant of variants) {
    const latencies: number[] = [];
    for (let i = 0; i < 20; i++) {
      const started = performance.now();
      await variant.start();
      latencies.push(performance.now() - started);
    }
    const until = Date.now() + SECONDS * 1000;
    let completed = 0;
    const started = Date.now();
    const serverCpuBefore = serverCpuSeconds();
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (Date.now() < until) {
          await variant.start();
          completed += 1;
        }
      }),
    );
    const serverCpuMs = SERVER_PIDS.length ? (1000 * (serverCpuSeconds() - serverCpuBefore)) / Math.max(1, completed) : null;
    console.log(JSON.stringify({ variant: variant.name, perSecond: completed / ((Date.now() - started) / 1000), alone: summary(latencies), serverCpuMs }));
  }
  worker.shutdown();
  await running;
  await connection.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
