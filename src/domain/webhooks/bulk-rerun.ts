import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Config } from '../../config';
import { ApiError } from '../../errors';
import { listDeliveries, rerunDelivery } from './deliveries-service';
import { getEndpoint } from './endpoints-service';

/** The most deliveries one bulk re-run asks for; the count of those left over is returned, to ask again. */
export const BULK_RERUN_LIMIT = 500;

/**
 * Re-runs an endpoint's failed deliveries made since `since`, oldest first, each as rerunDelivery does (same
 * X-Webhook-ID, one manual attempt). A delivery that stopped being failed meanwhile is skipped.
 */
export async function rerunFailedDeliveries(
  em: EntityManager,
  temporal: Client,
  config: Config,
  companyId: string,
  endpointId: string,
  since: Date,
  reason: string,
): Promise<{ requested: number; remaining: number }> {
  await getEndpoint(em, companyId, endpointId);
  const filters = { endpointId, status: 'failed' as const, createdFrom: since };
  const { items, total } = await listDeliveries(em, companyId, { limit: BULK_RERUN_LIMIT, offset: 0 }, filters);
  let requested = 0;
  for (const delivery of items.reverse()) {
    try {
      await rerunDelivery(em, temporal, config, companyId, delivery.id, reason);
      requested += 1;
    } catch (error) {
      if (!(error instanceof ApiError && error.code === 'CONFLICT')) throw error;
    }
  }
  return { requested, remaining: Math.max(0, total - items.length) };
}
