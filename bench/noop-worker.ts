/** Worker of the no-op workflow (the Temporal ceiling), a process of its own like the service's worker. */
import { NativeConnection, Worker } from '@temporalio/worker';

async function main() {
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS! });
  const worker = await Worker.create({
    connection,
    taskQueue: process.env.NOOP_TASK_QUEUE!,
    workflowsPath: require.resolve('./noop-workflow'),
    activities: { noop: async () => undefined },
  });
  process.on('SIGTERM', () => worker.shutdown());
  console.log('noop worker running');
  await worker.run();
  await connection.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
