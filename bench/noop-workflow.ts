import { patched, proxyActivities, proxyLocalActivities, upsertSearchAttributes } from '@temporalio/workflow';
import { DELIVERY_STATUS } from '../workflows/search-attributes';

const { noop } = proxyActivities<{ noop(): Promise<void> }>({ startToCloseTimeout: '1 minute' });
const local = proxyLocalActivities<{ noop(): Promise<void> }>({ startToCloseTimeout: '1 minute' });

/** The ceiling of a durable delivery: a workflow of one activity that does nothing. */
export async function noopWorkflow(): Promise<string> {
  await noop();
  return 'done';
}

/** The same with what a delivery added on its happy path before issue 42: the status search attribute set when it ends. */
export async function noopWithStatusWorkflow(): Promise<string> {
  await noop();
  upsertSearchAttributes([{ key: DELIVERY_STATUS, value: 'delivered' }]);
  return 'done';
}

/** A delivery's shape since issue 42: one workflow task, its work a local activity, `status` the status search attribute set at the end. */
export async function localWorkflow(options: { status: boolean; patch: boolean }): Promise<string> {
  if (options.patch) patched('variant-patch');
  await local.noop();
  if (options.status) upsertSearchAttributes([{ key: DELIVERY_STATUS, value: 'delivered' }]);
  return 'done';
}
