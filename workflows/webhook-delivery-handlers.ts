import { defineUpdate } from '@temporalio/workflow';

/** Input of a re-run; the Temporal UI sends it as JSON, e.g. {"reason": "endpoint fixed"}. */
export interface RerunRequest {
  reason?: string;
}

/** What a re-run did: its one attempt. */
export interface RerunResult {
  attemptNumber: number;
  delivered: boolean;
  statusCode: number | null;
  error: string | null;
}

/**
 * Re-runs a delivery now with the same X-Webhook-ID and answers with the attempt it made. Sent by
 * POST /webhook-deliveries/{id}/retry, the bulk recovery, or from the Temporal UI ("Send an Update").
 */
export const rerunUpdate = defineUpdate<RerunResult, [RerunRequest]>('rerun');

export const RERUN_UPDATE_DESCRIPTION =
  'Re-run this webhook delivery now, keeping its X-Webhook-ID, and show the attempt it made. Input (optional): ' +
  '{"reason": "why"}. A failed delivery gets one more attempt; one waiting for its next retry makes it at once.';

const MAX_REASON_LENGTH = 500;

/** Refuses a re-run request that is not `{}` or `{"reason": "<up to 500 characters>"}`; the UI shows the message. */
export function checkRerunRequest(request: unknown): void {
  if (request === undefined || request === null) return;
  if (typeof request !== 'object' || Array.isArray(request)) {
    throw new TypeError('The input must be a JSON object such as {"reason": "endpoint fixed"}');
  }
  const unknown = Object.keys(request).filter((key) => key !== 'reason');
  if (unknown.length > 0) throw new TypeError(`Unknown field ${unknown.map((k) => `"${k}"`).join(', ')}: the only field is "reason"`);
  const { reason } = request as { reason?: unknown };
  if (reason !== undefined && (typeof reason !== 'string' || reason.length > MAX_REASON_LENGTH)) {
    throw new TypeError(`"reason" must be a string of at most ${MAX_REASON_LENGTH} characters`);
  }
}
