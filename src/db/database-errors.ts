import { DriverException } from '@mikro-orm/core';
import { ApiError } from '../errors';

/** PostgreSQL's SQLSTATE of a driver error, or a Node network code. */
const codeOf = (error: unknown): string => String((error as { code?: unknown } | null)?.code ?? '');

/**
 * The database cannot be reached or is restarting: connection errors (SQLSTATE class 08 but for protocol
 * violations), shutdowns and start-ups (57P01–57P03), refused or reset sockets, a pool that found no
 * connection in time, and the next query of a transaction whose connection was lost (knex: "Transaction query
 * already complete").
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const code = codeOf(error);
  if ((code.startsWith('08') && code !== '08P01') || /^57P0[123]$/.test(code) || ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT'].includes(code)) return true;
  const { name, message } = (error ?? {}) as { name?: string; message?: string };
  return (
    name === 'KnexTimeoutError' ||
    /Connection terminated|connection to server|terminating connection|not queryable|socket has been ended|connection timeout|Connection ended|Transaction query already complete/i.test(message ?? '')
  );
}

/**
 * What a database error means to the caller, or null when it is not the caller's doing (a bug or an outage).
 * The checks in front of the database should have refused these already; this is the net under them, so a
 * value PostgreSQL refuses is never a 500 nor retried.
 */
export function apiErrorFromDatabase(error: unknown): ApiError | null {
  if (!(error instanceof DriverException)) return null;
  const code = codeOf(error);
  const pgMessage = error.message.split('\n')[0]!.replace(/^.* - /, '');
  if (code === '23505') return new ApiError('CONFLICT', 'A record with the same identifying values already exists', { field: null, reason: 'already exists' });
  if (code === '23503') {
    return new ApiError('CONFLICT', 'The change conflicts with related records: one is missing, or still in use', { field: null, reason: 'conflicts with related records' });
  }
  // Class 22 (data exception: out of range, invalid text representation, …), the value checks of class 23, and
  // the protocol violation a NUL character inside inlined query text causes.
  if (code.startsWith('22') || code === '23502' || code === '23514' || code === '08P01') {
    return new ApiError('INVALID_REQUEST', `A value in the request cannot be stored: ${pgMessage}`, { field: null, reason: 'cannot be stored' });
  }
  return null;
}
