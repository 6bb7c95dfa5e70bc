import { type Cursor, decodeCursor, invalidCursor, MAX_CURSOR_LENGTH, type Page } from '../domain/page';
import { ApiError } from '../errors';
import { parseTimestamp } from '../schemas/formats';
import { parseQuery, type QueryParam } from './routes/route-spec';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 100;

export function integerParam(name: string, description: string, min: number, max: number, fallback: number): QueryParam {
  const bounds = max === Number.MAX_SAFE_INTEGER ? `an integer of at least ${min}` : `an integer from ${min} to ${max}`;
  return {
    name,
    description,
    // The document states the largest value taken too: an offset of 17 digits is refused (the fuzz test found it unsaid).
    schema: { type: 'integer', minimum: min, maximum: max, default: fallback },
    parse(raw) {
      if (!/^\d{1,16}$/.test(raw)) throw ApiError.invalid(name, `must be ${bounds}`);
      const value = Number(raw);
      if (value < min || value > max) throw ApiError.invalid(name, `must be ${bounds}`);
      return value;
    },
  };
}

/**
 * `?after=`: the `pagination.next_cursor` of the page before, for the page that follows it. Opaque to clients;
 * what it holds (the list, the last record's sort value and id) is checked by the list it is given to.
 */
export const AFTER_PARAM: QueryParam = {
  name: 'after',
  description:
    'Cursor paging: the pagination.next_cursor of the previous page, for the records that follow it (offset must then be left out). ' +
    'Its cost stays flat however deep the page lies; the order and the total are those of the list.',
  schema: { type: 'string', minLength: 1, maxLength: MAX_CURSOR_LENGTH, pattern: '^[A-Za-z0-9_-]+$' },
  parse(raw): Cursor {
    const cursor = decodeCursor(raw);
    if (!cursor) throw invalidCursor('is not a cursor (pass the next_cursor of a page of the same list)');
    return cursor;
  },
};

/**
 * `?limit=&offset=` of every list (rest-api.md 4): limit 1–100 (default 50), offset ≥ 0 (default 0); and
 * `?after=`, a cursor, instead of offset.
 */
export const PAGE_PARAMS: readonly QueryParam[] = [
  integerParam('limit', 'Page size (1 to 100).', 1, MAX_LIMIT, DEFAULT_LIMIT),
  integerParam('offset', 'Records to skip.', 0, Number.MAX_SAFE_INTEGER, 0),
  AFTER_PARAM,
];

/** `?updated_since=`: only records changed at or after this instant (incremental sync). */
export const UPDATED_SINCE_PARAM: QueryParam = {
  name: 'updated_since',
  description: 'Only records created or changed at or after this time (ISO 8601 with a zone), for incremental sync.',
  schema: { type: 'string', format: 'date-time' },
  parse(raw) {
    const instant = parseTimestamp(raw);
    if (!instant) throw ApiError.invalid('updated_since', 'must be an ISO 8601 timestamp with a time zone from year 0001 to 9999, e.g. 2026-03-01T08:00:00Z');
    return instant;
  },
};

/** The page a list request asks for, from its parsed query values; an offset with a cursor is a 400. */
export function pageOf(values: Record<string, unknown>): Page {
  const limit = (values.limit as number | undefined) ?? DEFAULT_LIMIT;
  const offset = (values.offset as number | undefined) ?? 0;
  const after = values.after as Cursor | undefined;
  if (!after) return { limit, offset };
  if (offset !== 0) throw ApiError.invalid('offset', 'must be left out with after: a page after a cursor starts right after it');
  return { limit, offset, after };
}

/** `?limit=&offset=&after=` of a request that takes no other parameters; anything else is a 400. */
export const parsePage = (query: Record<string, string | string[] | undefined>): Page => pageOf(parseQuery(PAGE_PARAMS, query));

/**
 * A list response: `{ data, pagination: { limit, offset, total, next_cursor } }`. `next_cursor` is the `after`
 * of the next page, null on the last one; offset is 0 on a page after a cursor.
 */
export function listBody<T>(items: T[], total: number, page: Page, next: string | null) {
  return { data: items, pagination: { limit: page.limit, offset: page.offset, total, next_cursor: next } };
}
