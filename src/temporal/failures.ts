import { WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure, TemporalFailure } from '@temporalio/common';
import { apiErrorFromDatabase } from '../db/database-errors';
import { ApiError, ERROR_STATUS, type ErrorCode, type ErrorDetails } from '../errors';

/**
 * A request the caller got wrong (a 4xx ApiError, or data PostgreSQL refuses) cannot succeed on retry:
 * activities raise it as a non-retryable, benign ApplicationFailure typed with the error code, so the workflow
 * fails at once and the API can answer with the same error. Anything else is rethrown for Temporal to retry.
 */
export function toActivityFailure(error: unknown): unknown {
  const apiError = error instanceof ApiError ? error : apiErrorFromDatabase(error);
  if (apiError && apiError.status < 500) {
    return ApplicationFailure.create({
      message: apiError.message,
      type: apiError.code,
      nonRetryable: true,
      details: [apiError.details],
      category: 'BENIGN',
    });
  }
  return error;
}

/** Wraps every function of an activities object with toActivityFailure. */
export function withActivityFailures<T extends Record<string, (...args: never[]) => Promise<unknown>>>(activities: T): T {
  return Object.fromEntries(
    Object.entries(activities).map(([name, fn]) => [
      name,
      async (...args: never[]) => {
        try {
          return await fn(...args);
        } catch (error) {
          throw toActivityFailure(error);
        }
      },
    ]),
  ) as T;
}

/** The ApiError a failed workflow or update stands for: the business error it failed with, or the error itself. */
export function apiErrorFromWorkflow(error: unknown): unknown {
  if (!(error instanceof WorkflowFailedError || error instanceof WorkflowUpdateFailedError)) return error;
  let cause: unknown = error.cause;
  while (cause instanceof TemporalFailure && !(cause instanceof ApplicationFailure && cause.type && cause.type in ERROR_STATUS)) {
    cause = cause.cause;
  }
  if (cause instanceof ApplicationFailure) {
    const details = (cause.details?.[0] as ErrorDetails | undefined) ?? { field: null, reason: cause.message };
    return new ApiError(cause.type as ErrorCode, cause.message, details);
  }
  return error;
}
