import type { components } from './generated/openapi.js';

/** The `error` object of the service's error body: `{ "error": { "code", "message", "details": { "field", "reason" } } }`. */
export type ErrorObject = components['schemas']['ErrorBody']['error'];
export type ErrorDetails = ErrorObject['details'];

/**
 * A response that is not a success, with the service's error body: `code` is one of the stable upper-snake codes
 * of docs/errors.md (INVALID_REQUEST, NOT_FOUND, RATE_LIMITED, …). A response without that body (say, a proxy's
 * 502 page) has the code UNEXPECTED_RESPONSE.
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  readonly code: string;
  readonly details: ErrorDetails;
  /** The X-Request-Id of the response, to quote when asking about it. */
  readonly requestId: string | undefined;
  /** Retry-After in seconds, on 429 (RATE_LIMITED) and 503. */
  readonly retryAfterSeconds: number | undefined;

  constructor(status: number, error: ErrorObject, response?: Pick<Response, 'headers'>) {
    super(error.message);
    this.status = status;
    this.code = error.code;
    this.details = error.details;
    this.requestId = response?.headers.get('X-Request-Id') ?? undefined;
    this.retryAfterSeconds = retryAfterSeconds(response?.headers.get('Retry-After') ?? null);
  }

  /** The error of a response whose body was read as `body` (parsed JSON, or text when it was not JSON). */
  static fromResponse(response: Response, body: unknown): ApiError {
    if (isErrorBody(body)) return new ApiError(response.status, body.error, response);
    const reason = typeof body === 'string' && body ? body.slice(0, 200) : 'the response has no error body';
    return new ApiError(response.status, { code: 'UNEXPECTED_RESPONSE', message: `HTTP ${response.status} ${response.statusText}`.trim(), details: { field: null, reason } }, response);
  }
}

function isErrorBody(body: unknown): body is { error: ErrorObject } {
  if (typeof body !== 'object' || body === null || !('error' in body)) return false;
  const { error } = body as { error: unknown };
  return typeof error === 'object' && error !== null && typeof (error as ErrorObject).code === 'string' && typeof (error as ErrorObject).message === 'string';
}

/** Seconds to wait from a Retry-After value: delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterSeconds(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

export type WebhookVerificationErrorCode =
  /** X-Webhook-Timestamp is missing or not Unix seconds. */
  | 'INVALID_TIMESTAMP'
  /** The timestamp is further from now than the tolerance: an old (replayed) delivery, or a clock far off. */
  | 'TIMESTAMP_OUT_OF_TOLERANCE'
  /** No X-Webhook-Signature or X-Webhook-Signatures signature. */
  | 'MISSING_SIGNATURE'
  /** No signature matches the body with any of the secrets. */
  | 'INVALID_SIGNATURE'
  /** Signed correctly, but the body is not a JSON object. */
  | 'INVALID_PAYLOAD';

/** A delivery `verifyWebhook` refused; answer it with a 4xx status and do not act on it. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  readonly code: WebhookVerificationErrorCode;

  constructor(code: WebhookVerificationErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}
