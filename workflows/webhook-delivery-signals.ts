import { defineSignal } from '@temporalio/workflow';

/** Input of the rerun signal; the Temporal UI sends it as JSON, e.g. {"reason": "endpoint fixed"}. */
export interface RerunRequest {
  reason?: string;
}

/**
 * Re-runs a delivery now with the same X-Webhook-ID: a failed one gets one more attempt; one waiting for its
 * next scheduled attempt makes it at once. Sent by POST /webhook-deliveries/{id}/retry or from the UI.
 */
export const rerunSignal = defineSignal<[RerunRequest?]>('rerun');

export const RERUN_SIGNAL_DESCRIPTION =
  'Re-run this webhook delivery now, keeping its X-Webhook-ID. Input (optional): {"reason": "why"}. ' +
  'A failed delivery gets one more attempt; a delivery waiting for its next retry makes it immediately.';
