import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { v7 as uuidv7 } from 'uuid';
import type { Config } from '../../config';
import { ApiError } from '../../errors';
import { testDeliveryBody } from '../../events/delivery-body';
import { resultWithin } from '../../temporal/result-within';
import { deliveryWorkflowId, requestDeliveryRerun, startDeliveryWorkflow } from '../../webhooks/delivery-workflows';
import { findPage, type Page } from '../page';
import { DeliveryAttempt } from './delivery-attempt.entity';
import { getEndpoint } from './endpoints-service';
import { WebhookAlert } from './webhook-alert.entity';
import { type DeliveryStatus, WebhookDelivery } from './webhook-delivery.entity';

export interface DeliveryFilters {
  endpointId?: string;
  status?: DeliveryStatus;
  eventType?: string;
  /** Deliveries made at or after this instant. */
  createdFrom?: Date;
  /** Deliveries made before this instant. */
  createdBefore?: Date;
}

/** Delivery log of a company, newest first. */
export async function listDeliveries(em: EntityManager, companyId: string, page: Page, filters: DeliveryFilters) {
  const createdAt = {
    ...(filters.createdFrom ? { $gte: filters.createdFrom } : {}),
    ...(filters.createdBefore ? { $lt: filters.createdBefore } : {}),
  };
  const where = {
    company: companyId,
    ...(filters.endpointId ? { endpoint: filters.endpointId } : {}),
    ...(filters.status ? { status: filters.status } : {}),
    ...(filters.eventType ? { eventType: filters.eventType } : {}),
    ...(Object.keys(createdAt).length > 0 ? { createdAt } : {}),
  };
  return findPage(em, WebhookDelivery, where, { createdAt: 'desc', id: 'desc' }, page);
}

export async function getDelivery(em: EntityManager, companyId: string, id: string): Promise<WebhookDelivery> {
  const delivery = await em.findOne(WebhookDelivery, { id, company: companyId });
  if (!delivery) throw ApiError.notFound('Webhook delivery');
  return delivery;
}

export async function listAttempts(em: EntityManager, delivery: WebhookDelivery): Promise<DeliveryAttempt[]> {
  return em.find(DeliveryAttempt, { delivery }, { orderBy: { attemptNumber: 'asc' } });
}

/** Alerts raised for deliveries that used up their attempts, newest first. */
export async function listAlerts(em: EntityManager, companyId: string, page: Page) {
  return findPage(em, WebhookAlert, { company: companyId }, { createdAt: 'desc', id: 'desc' }, page);
}

/**
 * Re-runs a failed delivery (or makes a retrying one's next attempt now) with the same X-Webhook-ID: the
 * same thing the `rerun` signal does from the Temporal UI.
 */
export async function rerunDelivery(
  em: EntityManager,
  temporal: Client,
  config: Config,
  companyId: string,
  id: string,
  reason: string | undefined,
): Promise<WebhookDelivery> {
  const delivery = await em.findOne(WebhookDelivery, { id, company: companyId }, { populate: ['endpoint'] });
  if (!delivery) throw ApiError.notFound('Webhook delivery');
  if (delivery.status !== 'failed' && delivery.status !== 'retrying') {
    throw new ApiError('CONFLICT', `Only failed or retrying deliveries can be re-run; this one is ${delivery.status}`, {
      field: 'status',
      reason: `is ${delivery.status}`,
    });
  }
  const endpoint = delivery.endpoint.getEntity();
  await requestDeliveryRerun(
    temporal,
    config.temporal.taskQueue,
    {
      input: { deliveryId: delivery.id, retryDelaysMs: config.webhooks.retryDelaysMs, firstAttemptNumber: delivery.attemptCount, trigger: 'manual' },
      companyId,
      endpointId: endpoint.id,
      endpointUrl: endpoint.url,
      eventType: delivery.eventType,
    },
    { reason },
  );
  return delivery;
}

/**
 * Sends a webhook.test delivery to the endpoint: one attempt, recorded like any other delivery. Waits for
 * it up to the attempt deadline; `completed` is false when it is still going.
 */
export async function sendTestDelivery(
  em: EntityManager,
  temporal: Client,
  config: Config,
  companyId: string,
  endpointId: string,
): Promise<{ delivery: WebhookDelivery; completed: boolean }> {
  const endpoint = await getEndpoint(em, companyId, endpointId);
  const id = uuidv7();
  const body = testDeliveryBody({ deliveryId: id, companyId, endpointId, shape: endpoint.payloadShape });
  const delivery = em.create(WebhookDelivery, { id, company: companyId, endpoint, eventType: body.eventType, payload: body.payload, isTest: true });
  await em.flush();
  await startDeliveryWorkflow(temporal, config.temporal.taskQueue, {
    input: { deliveryId: id, retryDelaysMs: [], firstAttemptNumber: 0, trigger: 'test' },
    companyId,
    endpointId,
    endpointUrl: endpoint.url,
    eventType: body.eventType,
  });
  const { finished } = await resultWithin(temporal.workflow.getHandle(deliveryWorkflowId(id)), config.webhooks.timeoutMs + 5000);
  await em.refresh(delivery);
  return { delivery, completed: finished };
}
