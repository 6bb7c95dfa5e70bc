import { proxyActivities } from '@temporalio/workflow';

const { noop } = proxyActivities<{ noop(): Promise<void> }>({ startToCloseTimeout: '1 minute' });

/** The ceiling of a durable delivery: a workflow of one activity that does nothing. */
export async function noopWorkflow(): Promise<string> {
  await noop();
  return 'done';
}
