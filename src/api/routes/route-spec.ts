import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { ApiError } from '../../errors';
import type { JsonSchema } from '../../schemas/schema-files';
import type { SchemaValidator } from '../../schemas/schema-validator';
import type { AppState } from '../context';
import { requireScope } from '../middleware/authenticate';
import { type FileBody, fileBody } from '../middleware/file-body';
import { idempotency } from '../middleware/idempotency';
import { recordId } from '../record-id';

/** A query parameter: documented by `schema`, turned into a value by `parse` (which throws a 400). */
export interface QueryParam {
  name: string;
  description: string;
  schema: JsonSchema;
  parse(raw: string): unknown;
  /** A 400 when left out. */
  required?: boolean;
}

/**
 * A response a route documents: one value of a schema (`rest/customers.json#/$defs/record`), a page of them
 * (`{ data, pagination }`), or all of them (`{ data }`).
 */
export interface ResponseSpec {
  description: string;
  schema?: string;
  listOf?: string;
  dataOf?: string;
  /** A file: its bytes, as one of these media types (besides JSON of `schema`, when given). */
  fileTypes?: readonly string[];
}

/**
 * One REST route, declared once: the router mounts it (scope check, path id, query and body validation, then
 * the handler) and the OpenAPI document describes it from the same declaration.
 */
export interface RouteSpec {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** OpenAPI style, relative to /api/v1: `/customers/{id}`. A `{id}` is a record id (404 when it cannot be one). */
  path: string;
  /** Groups routes in the reference (the collection). */
  tag: string;
  summary: string;
  description?: string;
  /** The scope the API key needs. */
  scope: string;
  /** What `{id}` names, for its 404: "Customer". */
  record?: string;
  /** What the other ids of the path name, for their 404: `{ entry_id: 'Timesheet entry' }` for `…/entries/{entry_id}`. */
  pathRecords?: Record<string, string>;
  query?: QueryParam[];
  /** The request body's schema; optional bodies may be left out. */
  body?: { schema: string; optional?: boolean };
  /** A file as the request body instead of JSON (such routes are mounted ahead of the JSON body reader). */
  file?: FileBody;
  responses: Record<number, ResponseSpec>;
  /** Errors particular to this route, besides those every route may answer (400, 401, 403, 404, 429, …): status → when. */
  errors?: Record<number, string>;
  handler: Middleware<AppState>;
}

/** `{id}` → `:id`. */
export const koaPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

/** Parsed query values by parameter name; an unknown, repeated or invalid parameter is a 400 naming it. */
export function parseQuery(params: readonly QueryParam[], query: Record<string, string | string[] | undefined>): Record<string, unknown> {
  const byName = new Map(params.map((p) => [p.name, p]));
  const values: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(query)) {
    const param = byName.get(name);
    if (!param) throw ApiError.invalid(name, `is not a query parameter of this route${byName.size ? ` (accepted: ${[...byName.keys()].join(', ')})` : ''}`);
    if (Array.isArray(raw)) throw ApiError.invalid(name, 'must be given once');
    if (raw === undefined) continue;
    values[name] = param.parse(raw);
  }
  const missing = params.find((p) => p.required && values[p.name] === undefined);
  if (missing) throw ApiError.invalid(missing.name, 'is required but not provided', `Missing required query parameter: ${missing.name}`);
  return values;
}

/**
 * Parses every `{id}` of `router`'s routes once, before anything else of the route runs: one that cannot be a
 * record id is the same 404 as one that names no record. The route's name says what kind of record it is.
 */
export function parseRecordIds(router: Router<AppState>): void {
  router.param('id', (id, ctx, next) => {
    ctx.params.id = recordId(id, (ctx as { _matchedRouteName?: string })._matchedRouteName ?? 'Record');
    return next();
  });
}

/** Mounts `spec` on `router` with its checks in front of the handler (Idempotency-Key on writes). */
export function mountRoute(router: Router<AppState>, spec: RouteSpec, validator: SchemaValidator): void {
  const checks: Middleware<AppState>[] = [requireScope(spec.scope)];
  const nestedIds = Object.entries(spec.pathRecords ?? {});
  if (nestedIds.length) {
    // Like `{id}` (parseRecordIds), before the scope check: a malformed id is the 404 of an unknown one.
    checks.unshift((ctx, next) => {
      for (const [name, label] of nestedIds) ctx.params[name] = recordId(ctx.params[name], label);
      return next();
    });
  }
  const params = spec.query ?? [];
  checks.push((ctx, next) => {
    ctx.state.query = parseQuery(params, ctx.query);
    return next();
  });
  const { body, file } = spec;
  if (file) checks.push(fileBody(file));
  if (body) {
    checks.push((ctx, next) => {
      // The body parser leaves no body as undefined or {}; an optional body may be left out.
      ctx.request.body = validator.validate(body.schema, ctx.request.body ?? (body.optional ? {} : undefined));
      return next();
    });
  }
  if (spec.method !== 'GET') checks.push(idempotency());
  router.register(koaPath(spec.path), [spec.method], [...checks, spec.handler] as never, { name: spec.record ?? 'Record' });
}
