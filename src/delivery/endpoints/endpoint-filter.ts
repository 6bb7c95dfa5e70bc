import { ApiError } from '../../errors';
import type { EndpointFilter } from '../../generated/schemas';
import { isValidDate, parseTimestamp } from '../../schemas/formats';

/**
 * An endpoint's content filter (README "Filtering by content"): conditions on the body the endpoint would be sent, in
 * the JSON form of schemas/rest/webhook-endpoints.json `filter`. A node is one of
 * - a condition: `{ "path": "data.status", "<operator>": value }` with exactly one operator of OPERATORS;
 * - `{ "and": [nodes] }`, `{ "or": [nodes] }`, `{ "not": node }`.
 * The schema checks each node's keys and value types; checkFilter checks what it cannot say (one form per node, dates,
 * sizes), naming the field at fault. compileFilter turns a checked filter into a function, once per filter: the
 * dispatcher runs it for every event an endpoint is subscribed to.
 */

const OPERATORS = ['eq', 'ne', 'in', 'nin', 'gt', 'gte', 'lt', 'lte', 'exists'] as const;
type Operator = (typeof OPERATORS)[number];
const COMBINATORS = ['and', 'or', 'not'] as const;
const COMPARISONS = new Set<Operator>(['gt', 'gte', 'lt', 'lte']);

/** Conditions one filter may hold at most, and how deep its and/or/not may nest. */
const MAX_CONDITIONS = 50;
const MAX_DEPTH = 6;

/** A dotted path of field names and array indexes (the schema's pattern): data.project.project_code, data.assigned_employees.0.role. */
const PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.([A-Za-z_][A-Za-z0-9_]*|[0-9]+))*$/;

type FilterMatch = (body: Readonly<Record<string, unknown>>) => boolean;

type Scalar = string | number | boolean | null;
type Node = Record<string, unknown>;

/** Checks a filter the schema accepted, throwing a 400 that names the field at fault (filter.and[1].gt). */
export function checkFilter(filter: NonNullable<EndpointFilter>): void {
  let conditions = 0;
  const visit = (node: Node, at: string, depth: number): void => {
    if (depth > MAX_DEPTH) throw ApiError.invalid(at, `nests and/or/not deeper than ${MAX_DEPTH} levels`);
    const combinators = COMBINATORS.filter((key) => key in node);
    const operators = OPERATORS.filter((key) => key in node);
    if (combinators.length + operators.length !== 1) {
      throw ApiError.invalid(at, `must have exactly one of and, or, not or an operator (${OPERATORS.join(', ')}) with a path`);
    }
    if (combinators.length) {
      if ('path' in node) throw ApiError.invalid(`${at}.path`, `is not allowed beside ${combinators[0]}`);
      const combinator = combinators[0]!;
      if (combinator === 'not') return visit(node.not as Node, `${at}.not`, depth + 1);
      (node[combinator] as Node[]).forEach((child, index) => visit(child, `${at}.${combinator}[${index}]`, depth + 1));
      return;
    }
    const operator = operators[0]!;
    if (typeof node.path !== 'string') throw ApiError.invalid(`${at}.path`, `required beside ${operator}`);
    if (!PATH.test(node.path)) throw ApiError.invalid(`${at}.path`, 'must be a dotted path of field names and array indexes, e.g. data.project.project_code');
    if (++conditions > MAX_CONDITIONS) throw ApiError.invalid('filter', `must have at most ${MAX_CONDITIONS} conditions`);
    const value = node[operator];
    if (COMPARISONS.has(operator) && typeof value === 'string' && comparableDate(value) === null) {
      throw ApiError.invalid(`${at}.${operator}`, 'must be a number, a date (YYYY-MM-DD) or a timestamp (RFC 3339)');
    }
  };
  visit(filter as Node, 'filter', 1);
}

/** The instant a date or timestamp names, in milliseconds; null for any other text. */
function comparableDate(text: string): number | null {
  if (isValidDate(text)) return Date.parse(`${text}T00:00:00Z`);
  return parseTimestamp(text)?.getTime() ?? null;
}

/**
 * Reads a path's value out of a body: undefined when a step is missing or not an object or array. Own fields only: a
 * path such as data.constructor names nothing a body holds.
 */
function reader(path: string): (body: unknown) => unknown {
  const steps = path.split('.');
  return (body) => {
    let value = body;
    for (const step of steps) {
      if (value === null || typeof value !== 'object' || !Object.hasOwn(value, step)) return undefined;
      value = (value as Record<string, unknown>)[step];
    }
    return value;
  };
}

/**
 * A field's date or timestamp (RFC 3339 with its zone, or YYYY-MM-DD as midnight UTC) as an instant in milliseconds;
 * NaN for anything else.
 */
const DATE_OR_TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2})))?$/;
function fieldInstant(field: string): number {
  const m = DATE_OR_TIMESTAMP.exec(field);
  if (!m) return NaN;
  const utc = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, m[4] ? +m[4] : 0, m[5] ? +m[5] : 0, m[6] ? +m[6] : 0, m[7] ? Math.floor(+m[7] * 1000) : 0);
  return m[8] ? utc - (m[8] === '-' ? -1 : 1) * (+m[9]! * 60 + +m[10]!) * 60_000 : utc;
}

/**
 * A field's date or timestamp as the UTC text toISOString writes (2026-01-05T10:00:00.000Z), whose order is the
 * instants' order; null for anything else. The forms the service writes (toISOString's, without milliseconds, a date)
 * are put in it by their shape alone, without parsing: this runs for every event a date comparison sees.
 */
function utcText(field: unknown): string | null {
  if (typeof field !== 'string') return null;
  const dashes = field.length >= 10 && field[4] === '-' && field[7] === '-';
  if (dashes && field.length === 24 && field[10] === 'T' && field[19] === '.' && field[23] === 'Z') return field;
  if (dashes && field.length === 20 && field[10] === 'T' && field[19] === 'Z') return `${field.slice(0, 19)}.000Z`;
  if (dashes && field.length === 10) return `${field}T00:00:00.000Z`;
  const instant = fieldInstant(field);
  return Number.isNaN(instant) ? null : new Date(instant).toISOString();
}

/** The comparison of a field with a number (numbers only) or a date (dates and timestamps only), by its sign. */
function comparison(operator: Operator, value: number | string): (field: unknown) => boolean {
  const holds: (difference: number) => boolean =
    operator === 'gt' ? (d) => d > 0 : operator === 'gte' ? (d) => d >= 0 : operator === 'lt' ? (d) => d < 0 : (d) => d <= 0;
  if (typeof value === 'number') return (field) => typeof field === 'number' && holds(field - value);
  const bound = new Date(comparableDate(value)!).toISOString();
  return (field) => {
    const text = utcText(field);
    return text !== null && holds(text < bound ? -1 : text > bound ? 1 : 0);
  };
}

/** The function a checked filter stands for: true when the body matches. */
export function compileFilter(filter: EndpointFilter): FilterMatch {
  const compile = (node: Node): FilterMatch => {
    if ('and' in node) {
      const parts = (node.and as Node[]).map(compile);
      return (body) => parts.every((part) => part(body));
    }
    if ('or' in node) {
      const parts = (node.or as Node[]).map(compile);
      return (body) => parts.some((part) => part(body));
    }
    if ('not' in node) {
      const part = compile(node.not as Node);
      return (body) => !part(body);
    }
    const read = reader(node.path as string);
    const operator = OPERATORS.find((key) => key in node)!;
    const test = leaf(operator, node[operator]);
    return (body) => test(read(body));
  };
  return compile(filter as Node);
}

/** One operator's test of a field's value (undefined when the body lacks it). */
function leaf(operator: Operator, value: unknown): (field: unknown) => boolean {
  switch (operator) {
    case 'eq':
      return (field) => field === value;
    case 'ne':
      return (field) => field !== value;
    case 'in': {
      const allowed = new Set(value as Scalar[]);
      return (field) => allowed.has(field as Scalar);
    }
    case 'nin': {
      const refused = new Set(value as Scalar[]);
      return (field) => !refused.has(field as Scalar);
    }
    case 'exists':
      return value === true ? (field) => field !== undefined && field !== null : (field) => field === undefined || field === null;
    default:
      return comparison(operator, value as number | string);
  }
}

/**
 * Each endpoint's compiled filter, compiled again only when the endpoint changed (its updated_at): the dispatcher asks
 * for it for every event, and a compiled filter costs a few closures' calls.
 */
export class CompiledFilters {
  private readonly byEndpoint = new Map<string, { updatedAt: string; match: FilterMatch }>();

  /** Endpoints remembered at most: past it, the cache starts afresh (deleted endpoints' filters go with it). */
  constructor(private readonly capacity = 10_000) {}

  of(endpointId: string, updatedAt: string, filter: EndpointFilter): FilterMatch {
    const cached = this.byEndpoint.get(endpointId);
    if (cached && cached.updatedAt === updatedAt) return cached.match;
    if (this.byEndpoint.size >= this.capacity) this.byEndpoint.clear();
    const match = compileFilter(filter);
    this.byEndpoint.set(endpointId, { updatedAt, match });
    return match;
  }
}
