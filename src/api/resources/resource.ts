import type { EntityManager } from '@mikro-orm/postgresql';
import { actorOf, type Actor } from '../../domain/accounts/actor';
import { readScope, type RestCollection, writeScope } from '../../domain/accounts/scopes';
import type { ListPage, Page } from '../../domain/page';
import type { AppDeps } from '../context';
import { listBody, PAGE_PARAMS, pageOf, UPDATED_SINCE_PARAM } from '../pagination';
import type { QueryParam, RouteSpec } from '../routes/route-spec';
import type { Filter } from './filters';

/**
 * What a collection's service offers the generic routes; each method present is a route. RecordService
 * implements all five.
 */
export interface ResourceService<Wire> {
  /** `where` holds the filters' conditions; `values` every parsed query parameter (for lists that are queries of their own). */
  list?(em: EntityManager, companyId: string, page: Page, where: Record<string, unknown>, values: Record<string, unknown>): Promise<ListPage<Wire>>;
  get?(em: EntityManager, companyId: string, id: string): Promise<Wire>;
  create?(em: EntityManager, actor: Actor, input: never): Promise<Wire>;
  update?(em: EntityManager, actor: Actor, id: string, patch: never): Promise<Wire>;
  remove?(em: EntityManager, actor: Actor, id: string): Promise<void>;
}

/**
 * One REST collection, declared: the generic routes (list with paging, filters and updated_since; get; create
 * → 201 + Location; partial update; delete → 204) come from it, and so does its part of the OpenAPI document.
 */
export interface ResourceDefinition<Wire = unknown> {
  /** The path segment, also the name of its scopes (`customers:read`, `customers:write`). */
  collection: RestCollection;
  /** One record, capitalised: "Customer". */
  label: string;
  /** Several records, lower case: "customers". */
  plural: string;
  description: string;
  /** The schema file with `$defs` record, and create / update for the collections that accept them. */
  schema: string;
  /** The `$defs` entry of one record, when not `record`. */
  recordDef?: string;
  /** The service, or how to make it from the API's dependencies (one that needs Temporal or the configuration). */
  service: ResourceService<Wire> | ((deps: AppDeps) => ResourceService<Wire>);
  filters?: Filter[];
  /** List parameters the service reads itself (their values reach list() as `values`). */
  listParams?: QueryParam[];
  /** Whether the list takes `updated_since` (default true). */
  updatedSince?: boolean;
  /** How the list is ordered, when not oldest first. */
  listOrder?: string;
  /** Routes of this collection beyond the generic five. */
  extraRoutes?(deps: AppDeps): RouteSpec[];
}

/** A definition, typed for the generic routes, that keeps its collection's name (RESOURCES is keyed by it). */
export const defineResource = <Wire, C extends RestCollection>(definition: ResourceDefinition<Wire> & { collection: C }) => definition as ResourceDefinition & { collection: C };

/** The routes of a collection: the generic ones its service supports, then its own. */
export function resourceRoutes(definition: ResourceDefinition, deps: AppDeps): RouteSpec[] {
  const { collection, label, plural } = definition;
  const service = typeof definition.service === 'function' ? definition.service(deps) : definition.service;
  const def = (name: string) => `${definition.schema}#/$defs/${name === 'record' ? (definition.recordDef ?? 'record') : name}`;
  const base = `/${collection}`;
  const one = `${base}/{id}`;
  const read = readScope(collection);
  const write = writeScope(collection);
  const filters = definition.filters ?? [];
  const routes: RouteSpec[] = [];
  const common = { tag: collection, record: label };

  if (service.list) {
    const list = service.list.bind(service);
    routes.push({
      ...common,
      method: 'GET',
      path: base,
      scope: read,
      summary: `List ${plural}`,
      description: `${definition.listOrder ?? 'Oldest first (created_at, then id)'}. Filters combine with AND.`,
      query: [...PAGE_PARAMS, ...(definition.updatedSince === false ? [] : [UPDATED_SINCE_PARAM]), ...filters.map((f) => f.param), ...(definition.listParams ?? [])],
      responses: { 200: { description: `A page of ${plural}`, listOf: def('record') } },
      async handler(ctx) {
        const values = ctx.state.query;
        const page = pageOf(values);
        // Each condition stays whole under $and: two filters may both use $or.
        const conditions: Record<string, unknown>[] = [];
        if (values.updated_since) conditions.push({ updatedAt: { $gte: values.updated_since } });
        for (const f of filters) if (values[f.param.name] !== undefined) conditions.push(f.where(values[f.param.name]));
        const where = conditions.length ? { $and: conditions } : {};
        const { items, total, next } = await list(ctx.state.em, ctx.state.principal.companyId, page, where, values);
        ctx.body = listBody(items, total, page, next);
      },
    });
  }
  if (service.get) {
    const get = service.get.bind(service);
    routes.push({
      ...common,
      method: 'GET',
      path: one,
      scope: read,
      summary: `Get a ${label.toLowerCase()}`,
      responses: { 200: { description: `The ${label.toLowerCase()}`, schema: def('record') } },
      async handler(ctx) {
        ctx.body = await get(ctx.state.em, ctx.state.principal.companyId, ctx.params.id!);
      },
    });
  }
  if (service.create) {
    const create = service.create.bind(service);
    routes.push({
      ...common,
      method: 'POST',
      path: base,
      scope: write,
      summary: `Create a ${label.toLowerCase()}`,
      body: { schema: def('create') },
      responses: { 201: { description: `The ${label.toLowerCase()} created; Location names it`, schema: def('record') } },
      async handler(ctx) {
        const record = (await create(ctx.state.em, actorOf(ctx.state.principal), ctx.request.body as never)) as { id: string };
        ctx.status = 201;
        ctx.set('Location', `${ctx.path}/${record.id}`);
        ctx.body = record;
      },
    });
  }
  if (service.update) {
    const update = service.update.bind(service);
    routes.push({
      ...common,
      method: 'PUT',
      path: one,
      scope: write,
      summary: `Update a ${label.toLowerCase()}`,
      description: 'A partial update: only the fields given change; null clears an optional field.',
      body: { schema: def('update') },
      responses: { 200: { description: `The ${label.toLowerCase()} as it is now`, schema: def('record') } },
      async handler(ctx) {
        ctx.body = await update(ctx.state.em, actorOf(ctx.state.principal), ctx.params.id!, ctx.request.body as never);
      },
    });
  }
  if (service.remove) {
    const remove = service.remove.bind(service);
    routes.push({
      ...common,
      method: 'DELETE',
      path: one,
      scope: write,
      summary: `Delete a ${label.toLowerCase()}`,
      responses: { 204: { description: 'Deleted' } },
      async handler(ctx) {
        await remove(ctx.state.em, actorOf(ctx.state.principal), ctx.params.id!);
        ctx.status = 204;
      },
    });
  }
  return [...routes, ...(definition.extraRoutes?.(deps) ?? [])];
}
