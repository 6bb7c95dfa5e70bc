import { proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import { DELIVERY_STATUS } from '../src/temporal/search-attributes';

const { noop } = proxyActivities<{ noop(): Promise<void> }>({ startToCloseTimeout: '1 minute' });

/** The ceiling of a durable delivery: a workflow of one activity that does nothing. */
export async function noopWorkflow(): Promise<string> {
  await noop();
  return 'done';
}

/** The same with what a delivery adds on its happy path: the status search attribute set when it ends. */
export async function noopWithStatusWorkflow(): Promise<string> {
  await noop();
  upsertSearchAttributes([{ key: DELIVERY_STATUS, value: 'delivered' }]);
  return 'done';
}
