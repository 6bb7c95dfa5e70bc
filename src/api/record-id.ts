import { ApiError } from '../errors';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A record id from the path; one that cannot exist is the same 404 as one that does not. */
export function recordId(raw: string | undefined, what: string): string {
  if (!raw || !UUID.test(raw)) throw ApiError.notFound(what);
  return raw.toLowerCase();
}
