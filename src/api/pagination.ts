import type { Page } from '../domain/page';
import { ApiError } from '../errors';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 100;

function integerParam(query: Record<string, string | string[] | undefined>, name: string, fallback: number, min: number, max: number): number {
  const raw = query[name];
  if (raw === undefined) return fallback;
  const bounds = max === Number.MAX_SAFE_INTEGER ? `an integer of at least ${min}` : `an integer from ${min} to ${max}`;
  if (typeof raw !== 'string' || !/^\d{1,16}$/.test(raw)) throw ApiError.invalid(name, `must be ${bounds}`);
  const value = Number(raw);
  if (value < min || value > max) throw ApiError.invalid(name, `must be ${bounds}`);
  return value;
}

/** `?limit=&offset=` of a list request: limit 1–100 (default 50), offset ≥ 0 (default 0); anything else is a 400. */
export function parsePage(query: Record<string, string | string[] | undefined>): Page {
  return {
    limit: integerParam(query, 'limit', DEFAULT_LIMIT, 1, MAX_LIMIT),
    offset: integerParam(query, 'offset', 0, 0, Number.MAX_SAFE_INTEGER),
  };
}

export function listBody<T>(items: T[], total: number, page: Page) {
  return { data: items, pagination: { limit: page.limit, offset: page.offset, total } };
}
