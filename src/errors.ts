/**
 * The one error type the API answers with. Every error body is
 * `{ "error": { "code", "message", "details": { "field", "reason" } } }`; docs/errors.md lists the codes.
 */

export const ERROR_STATUS = {
  INVALID_REQUEST: 400,
  UNKNOWN_SKILLS: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  INVALID_SIGNATURE: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  REPLAYED_REQUEST: 409,
  IDEMPOTENCY_KEY_IN_USE: 409,
  CURSOR_EXPIRED: 410,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorDetails {
  /** The request field, header or parameter at fault; null when no single one is. */
  field: string | null;
  reason: string;
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details: ErrorDetails };
}

export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetails,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_STATUS[code];
  }

  toBody(): ErrorBody {
    return { error: { code: this.code, message: this.message, details: this.details } };
  }

  static invalid(field: string, reason: string, message = `${field} ${reason}`): ApiError {
    return new ApiError('INVALID_REQUEST', message, { field, reason });
  }

  static notFound(what: string, field: string | null = 'id'): ApiError {
    return new ApiError('NOT_FOUND', `${what} not found`, { field, reason: 'does not exist' });
  }

  static conflict(field: string, message: string): ApiError {
    return new ApiError('CONFLICT', message, { field, reason: 'already exists' });
  }
}
