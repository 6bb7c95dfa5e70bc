import { ApiError } from '../errors';
import { isUuid } from '../schemas/formats';

/** A record id from the path; one that cannot exist is the same 404 as one that does not. */
export function recordId(raw: string | undefined, what: string): string {
  if (!raw || !isUuid(raw)) throw ApiError.notFound(what);
  return raw.toLowerCase();
}
