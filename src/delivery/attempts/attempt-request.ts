import type { EntityManager } from '@mikro-orm/postgresql';
import { type CompiledTransformations, type TransformationError, type TransformedRequest, urlWithPath } from '../endpoints/endpoint-transformation';
import type { AttemptResult } from './attempt-result';
import { type BegunAttempt, RECORD_TRANSFORMED } from './attempt-statements';
import type { AttemptTrigger } from '../../../workflows/webhook-delivery.contract';

/**
 * What an attempt sends (step 3 of attempt.ts): the delivery's stored body to the endpoint's URL, or what the endpoint's
 * transformation made of it (docs/transformations.md). The transformation runs once per delivery, before its first
 * attempt, and again at a re-run by hand (with the transformation saved then, as a re-run takes the endpoint's URL and
 * secrets as they are then); what it made is recorded on the delivery, and every other attempt sends that.
 */

/** The body, URL and headers (besides the signature's and the authentication's) of one attempt. */
export interface OutgoingRequest {
  payload: string;
  url: string;
  headers: Record<string, string>;
}

export type PreparedRequest = { ok: true; request: OutgoingRequest } | { ok: false; error: TransformationError };

/** Whether this attempt evaluates the transformation: a delivery's first attempt or a re-run by hand; never a test send. */
const transformsNow = (begun: BegunAttempt, attemptNumber: number, trigger: AttemptTrigger) =>
  !begun.isTest && (attemptNumber === 0 || trigger === 'manual');

/** The request of the attempt; a transformation that fails is the attempt's failure, and nothing is sent. */
export async function preparedRequest(
  db: EntityManager,
  transformations: CompiledTransformations,
  begun: BegunAttempt,
  attempt: { attemptNumber: number; trigger: AttemptTrigger },
): Promise<PreparedRequest> {
  const { endpoint } = begun;
  if (!transformsNow(begun, attempt.attemptNumber, attempt.trigger)) return { ok: true, request: requestOf(begun, begun.transformed) };
  if (endpoint.transformation === null) {
    // Its transformation removed since an earlier run: the log shows what is sent now.
    if (begun.transformed) await record(db, begun.deliveryId, null);
    return { ok: true, request: requestOf(begun, null) };
  }
  const outcome = await transformations.run(
    { id: begun.endpointId, updatedAt: endpoint.updatedAt, url: endpoint.url, transformation: endpoint.transformation },
    JSON.parse(begun.payload) as unknown,
  );
  if (!outcome.ok) {
    if (begun.transformed) await record(db, begun.deliveryId, null);
    return outcome;
  }
  await record(db, begun.deliveryId, outcome.request);
  return { ok: true, request: requestOf(begun, outcome.request) };
}

function record(db: EntityManager, deliveryId: string, transformed: TransformedRequest | null): Promise<unknown> {
  return RECORD_TRANSFORMED.rows(db, [deliveryId, transformed?.payload ?? null, transformed ? JSON.stringify(transformed.headers) : null, transformed?.path ?? null]);
}

/**
 * The request of a delivery, transformed or not. Its transformed headers never take the place of the endpoint's
 * authentication's (any case): those, and the signature's after them, win.
 */
function requestOf(begun: BegunAttempt, transformed: TransformedRequest | null): OutgoingRequest {
  if (!transformed) return { payload: begun.payload, url: begun.endpoint.url, headers: {} };
  const authentication = begun.endpoint.authentication;
  const taken = new Set((authentication?.authHeaders ?? []).map((header) => header.name.toLowerCase()));
  if (authentication?.oauth) taken.add('authorization');
  const headers = Object.fromEntries(Object.entries(transformed.headers).filter(([name]) => !taken.has(name.toLowerCase())));
  return { payload: transformed.payload, url: urlWithPath(begun.endpoint.url, transformed.path), headers };
}

/** A transformation that failed, as its attempt's result: a failure for good, made without sending anything. */
export function transformationFailed(error: TransformationError): AttemptResult {
  return { statusCode: null, durationMs: 0, error: error.message, failureKind: 'transformation', responseExcerpt: null, retryAfterMs: null };
}
