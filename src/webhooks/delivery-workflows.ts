import { type Client, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { webhookDelivery, WebhookDeliveryInput } from '../../workflows/webhook-delivery';
import { type RerunRequest, rerunSignal } from '../../workflows/webhook-delivery-signals';
import { COMPANY_ID, DELIVERY_STATUS, ENDPOINT_ID, EVENT_TYPE } from '../temporal/search-attributes';

/** One workflow per delivery, named after it, so a delivery is never started twice. */
export const deliveryWorkflowId = (deliveryId: string) => `webhook-delivery/${deliveryId}`;

export interface DeliveryToStart {
  input: WebhookDeliveryInput;
  companyId: string;
  endpointId: string;
  endpointUrl: string;
  eventType: string;
}

/**
 * Starts the delivery's workflow with the search attributes operators filter by in the Temporal UI
 * (CompanyId, EndpointId, EventType, DeliveryStatus) and a one-line summary. Returns false when it was
 * already started (a dispatcher re-running after a crash, or another replica).
 */
export async function startDeliveryWorkflow(
  temporal: Client,
  taskQueue: string,
  delivery: DeliveryToStart,
  reuse: 'REJECT_DUPLICATE' | 'ALLOW_DUPLICATE' = 'REJECT_DUPLICATE',
): Promise<boolean> {
  try {
    await temporal.workflow.start<typeof webhookDelivery>('webhookDelivery', {
      taskQueue,
      workflowId: deliveryWorkflowId(delivery.input.deliveryId),
      args: [delivery.input],
      workflowIdReusePolicy: reuse,
      typedSearchAttributes: [
        { key: COMPANY_ID, value: delivery.companyId },
        { key: ENDPOINT_ID, value: delivery.endpointId },
        { key: EVENT_TYPE, value: delivery.eventType },
        { key: DELIVERY_STATUS, value: 'pending' },
      ],
      staticSummary: `${delivery.eventType} → ${delivery.endpointUrl}`,
      staticDetails: `Delivery ${delivery.input.deliveryId} (X-Webhook-ID) of company ${delivery.companyId} to endpoint ${delivery.endpointId}. Re-run with the "rerun" signal.`,
    });
    return true;
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw error;
  }
}

/**
 * Asks for a re-run: signals the delivery's workflow while it runs, or starts a new run for it (one manual
 * attempt, numbered after the attempts already made) once it has closed.
 */
export async function requestDeliveryRerun(temporal: Client, taskQueue: string, delivery: DeliveryToStart, request: RerunRequest): Promise<void> {
  const handle = temporal.workflow.getHandle(deliveryWorkflowId(delivery.input.deliveryId));
  try {
    await handle.signal(rerunSignal, request);
    return;
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
  if (!(await startDeliveryWorkflow(temporal, taskQueue, delivery, 'ALLOW_DUPLICATE'))) {
    // Someone else restarted it between our signal and our start: the signal reaches that run instead.
    await handle.signal(rerunSignal, request);
  }
}
