import { type FilterQuery, LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../errors';
import { changesBetween } from '../../events/changes';
import { recordEvent } from '../../events/outbox';
import type { EventKey, EventPayload } from '../../events/registry';
import type { Actor } from '../accounts/actor';
import { ApiKey } from '../accounts/api-key.entity';
import { Company } from '../accounts/company.entity';
import type { CompanyRecord } from '../company-record';
import { findIdIgnoringCase, lockNaturalKey } from '../natural-keys';
import { findPage, findRow, type ListPage, type Page, type View } from '../page';
import { applyWire, type FieldMapping, toWire, type WireMapping } from './wire-mapping';

/** Who changes a record, and when: what the event builders put in *_by and *_at. */
export interface ChangeContext {
  actor: Actor;
  at: Date;
  /** Why, when the caller said (a deletion's reason). */
  reason?: string | null;
  /** The API key's name, for records whose events carry it (RecordSpec.namesActor). */
  actorName?: string;
}

/** An event a change produces, with the data of each shape that describes it. */
export type RecordedEvent = { [K in EventKey]: { key: K; payload: EventPayload<K> } }[EventKey];

/** What a change emits: one event, or several of which the first is the change's own (it takes ChangeOptions.eventId). */
export type RecordedEvents = RecordedEvent | readonly RecordedEvent[];

/** The fields that identify a record to other systems, unique (case-insensitively) within a scope. */
export interface NaturalKey<E> {
  /** The relation the key is unique under (a location's customer), or null for the whole company. */
  scope: (keyof E & string) | null;
  fields: readonly (keyof E & string)[];
  /** Values that have no case (dates) are compared exactly. */
  exact?: boolean;
  /** The conflict message: `A customer named "Acme" already exists`. */
  describe(entity: E): string;
  /**
   * The unique index that compares the key as it is compared here (lower() of the fields, or as they are when
   * `exact`), under the same scope. With it a create inserts at once and answers the index's refusal with the 409,
   * instead of taking the key's lock and looking first: two statements fewer for every create.
   */
  uniqueIndex?: string;
}

/** Everything that differs between one kind of record and another; RecordService does the rest. */
export interface RecordSpec<E extends CompanyRecord, Wire> {
  entity: new () => E;
  /** How people call one, capitalised: "Customer". */
  label: string;
  wire: WireMapping<E, Wire>;
  naturalKey?: NaturalKey<E>;
  /** List fields whose order means nothing (regions): a reordering is no change, and changes list them as {added, removed}. */
  setFields?: readonly string[];
  /** Normalises a create body or update patch before it is applied (alternative input forms, codes). */
  prepare?(input: Record<string, unknown>): Record<string, unknown>;
  /** Relations the event builders and checks read. */
  populate?: readonly string[];
  /**
   * Relations the wire form reads (a department's name, skills, nested entries): loaded for reads unless
   * rowColumns adds what the rows need (plain rows are cheaper than entities).
   */
  wireRelations?: readonly string[];
  /**
   * What the wire form reads besides the table's columns, by property: SQL selecting one value for the row
   * `r` (the ordered ids of a collection), read in the same statement as the rows.
   */
  rowColumns?: Record<string, string>;
  /** Refuses any change or deletion of the record as it stands (throw), before anything is applied: a locked timesheet. */
  beforeUpdate?(entity: E): void;
  /**
   * Rules across fields, after a create or update is applied (throw an ApiError to refuse); `before` is the
   * record's wire form before an update (a status it may not leave, say), undefined for a create.
   */
  check?(em: EntityManager, entity: E, before?: Wire): Promise<void>;
  /** Values the service assigns to a new record (a number from a sequence, who created it), after the checks. */
  beforeInsert?(em: EntityManager, entity: E, ctx: ChangeContext): Promise<void>;
  /** Whether the events name the acting API key (*_by_name): its name is then looked up for ChangeContext.actorName. */
  namesActor?: boolean;
  events?: {
    created?(entity: E, ctx: ChangeContext): RecordedEvents;
    /** `before` and `after` are the record's wire form; only called when they differ. Several events are recorded in order. */
    updated?(entity: E, change: { before: Wire; after: Wire }, ctx: ChangeContext): RecordedEvents;
    deleted?(entity: E, ctx: ChangeContext): RecordedEvents;
  };
  /** Refuses the delete (throw) or removes what depends on the record, in the same transaction. */
  beforeDelete?(em: EntityManager, entity: E, ctx: ChangeContext): Promise<void>;
}

export interface ChangeOptions {
  /** The id of the (first) event the change records (inbound requests answer with it). */
  eventId?: string;
  /** Why, for the events that carry a reason. */
  reason?: string | null;
}

/**
 * List, get, create, update and delete of one kind of company record, each change in one transaction with
 * its outbox event. REST resources and inbound operations both call these, so both emit the same events.
 */
export class RecordService<E extends CompanyRecord, Wire, Create extends object = object, Update extends object = object> {
  constructor(readonly spec: RecordSpec<E, Wire>) {}

  get label(): string {
    return this.spec.label;
  }

  /** Whether reads can make the wire form from plain rows. */
  private get readsRows(): boolean {
    return Boolean(this.spec.rowColumns) || !this.spec.wireRelations;
  }

  async list(em: EntityManager, companyId: string, page: Page, where: FilterQuery<E> = {}): Promise<ListPage<Wire>> {
    const scoped = { ...(where as object), company: companyId } as FilterQuery<E>;
    const { items, total, next } = await findPage(em, this.spec.entity, scoped, { createdAt: 'asc', id: 'asc' } as never, page, this.spec.rowColumns);
    if (this.readsRows) return { items: items.map((row) => toWire(this.spec.wire, row as unknown as View<E>)), total, next };
    const ids = items.map((row) => (row as unknown as { id: string }).id);
    const entities = await em.find(this.spec.entity, { id: { $in: ids } } as unknown as FilterQuery<E>, { populate: this.spec.wireRelations as never });
    const byId = new Map(entities.map((e) => [e.id, e]));
    return { items: ids.map((id) => toWire(this.spec.wire, byId.get(id)!)), total, next };
  }

  async get(em: EntityManager, companyId: string, id: string): Promise<Wire> {
    const view = this.readsRows
      ? await findRow(em, this.spec.entity, { companyId, id }, this.spec.rowColumns)
      : await em.findOne(this.spec.entity, { id, company: companyId } as FilterQuery<E>, { populate: (this.spec.wireRelations ?? []) as never });
    if (!view) throw ApiError.notFound(this.spec.label);
    return toWire(this.spec.wire, view as View<E>);
  }

  async create(em: EntityManager, actor: Actor, input: Create, options: ChangeOptions = {}): Promise<Wire> {
    let entity: E | undefined;
    try {
      return await em.transactional(async (tx) => {
        entity = await this.build(tx, actor, input);
        if (!this.spec.naturalKey?.uniqueIndex) await this.assertKeyAvailable(tx, entity);
        return this.insert(tx, actor, entity, options);
      });
    } catch (error) {
      // The insert may be written by the transaction's closing flush, so its refusal is caught out here.
      if (entity && this.refusedByKeyIndex(error)) throw this.keyConflict(entity);
      throw error;
    }
  }

  /**
   * The record whose natural key `input` carries, created from `input` when there is none: an idempotent
   * step (a retried activity finds what the first attempt made). An existing record is left unchanged.
   */
  async findOrCreate(em: EntityManager, actor: Actor, input: Create): Promise<{ record: Wire; created: boolean }> {
    const attempt = () =>
      em.transactional(async (tx) => {
        const entity = await this.build(tx, actor, input);
        const existingId = await this.lockAndFindKey(tx, entity);
        if (existingId) return { record: await this.get(tx, actor.companyId, existingId), created: false };
        return { record: await this.insert(tx, actor, entity, {}), created: true };
      });
    try {
      return await attempt();
    } catch (error) {
      // A create takes no lock when an index guards the key, so one may have committed it since the look: look again
      // (inside a caller's transaction this one was a savepoint, rolled back alone).
      if (!this.refusedByKeyIndex(error)) throw error;
      return attempt();
    }
  }

  async update(em: EntityManager, actor: Actor, id: string, patch: Update, options: ChangeOptions = {}): Promise<Wire> {
    return (await this.change(em, actor, id, patch, options)).record;
  }

  /** An update that also says whether anything changed: when nothing did, no event is recorded. */
  async change(em: EntityManager, actor: Actor, id: string, patch: Update, options: ChangeOptions = {}): Promise<{ record: Wire; changed: boolean }> {
    const wire = this.spec.wire as WireMapping<E, object>;
    return this.modify(em, actor, id, (tx, entity) => applyWire(tx, actor.companyId, wire, entity, this.prepared(patch)), options);
  }

  /**
   * A change made by code rather than by a patch (removing a nested entry): `apply` changes the locked
   * entity; checks, `changed` and the updated event(s) are as for `change`.
   */
  async modify(
    em: EntityManager,
    actor: Actor,
    id: string,
    apply: (tx: EntityManager, entity: E) => Promise<void>,
    options: ChangeOptions = {},
  ): Promise<{ record: Wire; changed: boolean }> {
    return em.transactional(async (tx) => {
      const entity = await this.loadForUpdate(tx, actor.companyId, id);
      this.spec.beforeUpdate?.(entity);
      const before = toWire(this.spec.wire, entity);
      await apply(tx, entity);
      await this.assertKeyAvailable(tx, entity);
      await this.spec.check?.(tx, entity, before);
      const changed = Object.keys(changesBetween(before as object, toWire(this.spec.wire, entity) as object, 'A', this.spec.setFields)).length > 0;
      // A change of nested rows only (entries, skills) leaves the record's own columns as they were.
      if (changed) entity.updatedAt = new Date();
      // Written before the wire form is read: the flush sets updated_at (onUpdate) as stored.
      await tx.flush();
      await tx.populate(entity, this.relations() as never);
      const after = toWire(this.spec.wire, entity);
      if (changed && this.spec.events?.updated) {
        this.emit(tx, actor, this.spec.events.updated(entity, { before, after }, await this.context(tx, actor, entity.updatedAt)), options);
      }
      return { record: after, changed };
    });
  }

  async remove(em: EntityManager, actor: Actor, id: string, options: ChangeOptions = {}): Promise<void> {
    await em.transactional(async (tx) => {
      const entity = await this.loadForUpdate(tx, actor.companyId, id);
      this.spec.beforeUpdate?.(entity);
      const ctx = { ...(await this.context(tx, actor, new Date())), reason: options.reason ?? null };
      await this.spec.beforeDelete?.(tx, entity, ctx);
      if (this.spec.events?.deleted) this.emit(tx, actor, this.spec.events.deleted(entity, ctx), options);
      tx.remove(entity);
      await tx.flush();
    });
  }

  /**
   * The id of the record with this natural key (compared case-insensitively), or null. `scopeId` is the id
   * of the record the key is unique under (ignored for company-wide keys).
   */
  async findIdByKey(em: EntityManager, companyId: string, values: readonly string[], scopeId?: string): Promise<string | null> {
    const key = this.requireKey();
    const { table, columns, scopeColumn } = this.keyColumns(em, key);
    const scope = scopeColumn ? { [scopeColumn]: scopeId! } : {};
    const match = Object.fromEntries(columns.map((c, i) => [c, values[i]!]));
    return key.exact
      ? findIdIgnoringCase(em, table, { company_id: companyId, ...scope, ...match }, {})
      : findIdIgnoringCase(em, table, { company_id: companyId, ...scope }, match);
  }

  /** The company's record, locked until the transaction ends, with the relations its events read; or 404. */
  async loadForUpdate(em: EntityManager, companyId: string, id: string): Promise<E> {
    const where = { id, company: companyId } as FilterQuery<E>;
    // Locked on its own: FOR UPDATE cannot apply to the outer-joined rows a populate would add.
    const entity = await em.findOne(this.spec.entity, where, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!entity) throw ApiError.notFound(this.spec.label);
    await em.populate(entity, this.relations() as never);
    return entity;
  }

  /** Every relation a change reads: the wire form's and the events'. */
  private relations(): string[] {
    return [...(this.spec.wireRelations ?? []), ...(this.spec.populate ?? [])];
  }

  private async build(tx: EntityManager, actor: Actor, input: Create): Promise<E> {
    const entity = new this.spec.entity();
    entity.company = tx.getReference(Company, actor.companyId, { wrapped: true });
    await applyWire(tx, actor.companyId, this.spec.wire as WireMapping<E, object>, entity, this.prepared(input));
    return entity;
  }

  private prepared(input: object): object {
    return this.spec.prepare ? this.spec.prepare({ ...input }) : input;
  }

  /**
   * Persists the new record and its created event(s). A record whose wire form or events read relations is written
   * first and the relations loaded; one without is written with its event(s) by the transaction's closing flush: one
   * pass of MikroORM's unit of work instead of two, 14–17 % of a create's CPU in the api (docs/benchmarks.md, "4.
   * Inbound create").
   */
  private async insert(tx: EntityManager, actor: Actor, entity: E, options: ChangeOptions): Promise<Wire> {
    const ctx = await this.context(tx, actor, entity.createdAt);
    await this.spec.check?.(tx, entity);
    await this.spec.beforeInsert?.(tx, entity, ctx);
    tx.persist(entity);
    const relations = this.relations();
    if (relations.length > 0) {
      await tx.flush();
      await tx.populate(entity, relations as never);
    }
    if (this.spec.events?.created) this.emit(tx, actor, this.spec.events.created(entity, ctx), options);
    return toWire(this.spec.wire, entity);
  }

  private async context(tx: EntityManager, actor: Actor, at: Date): Promise<ChangeContext> {
    if (!this.spec.namesActor) return { actor, at };
    const key = await tx.findOneOrFail(ApiKey, { id: actor.apiKeyId, company: actor.companyId }, { fields: ['name'] });
    return { actor, at, actorName: key.name };
  }

  private emit(tx: EntityManager, actor: Actor, events: RecordedEvents, options: ChangeOptions): void {
    const list: readonly RecordedEvent[] = Array.isArray(events) ? events : [events as RecordedEvent];
    list.forEach((event, index) => recordEvent(tx, actor, event.key, event.payload as never, index === 0 ? options.eventId : undefined));
  }

  /** 409 when another record holds the entity's natural key; the lock makes concurrent writers take turns. */
  private async assertKeyAvailable(tx: EntityManager, entity: E): Promise<void> {
    if (!this.spec.naturalKey) return;
    const existingId = await this.lockAndFindKey(tx, entity);
    if (existingId && existingId !== entity.id) throw this.keyConflict(entity);
  }

  private keyConflict(entity: E): ApiError {
    const key = this.requireKey();
    return ApiError.conflict(this.wireFieldOf(key.fields[0]!), key.describe(entity));
  }

  /** Whether `error` is the refusal of the natural key's unique index. */
  private refusedByKeyIndex(error: unknown): boolean {
    const index = this.spec.naturalKey?.uniqueIndex;
    return index !== undefined && error instanceof UniqueConstraintViolationException && (error as { constraint?: string }).constraint === index;
  }

  private async lockAndFindKey(tx: EntityManager, entity: E): Promise<string | null> {
    const key = this.requireKey();
    const record = entity as unknown as Record<string, unknown>;
    // A key the service assigns on insert (a work order number) has nothing to collide with yet.
    if (key.fields.some((f) => record[f] === undefined || record[f] === null)) return null;
    const scopeId = key.scope ? (record[key.scope] as { id: string }).id : entity.company.id;
    const values = key.fields.map((f) => String(record[f]));
    const { table } = this.keyColumns(tx, key);
    await lockNaturalKey(tx, scopeId, table, ...values);
    return this.findIdByKey(tx, entity.company.id, values, scopeId);
  }

  private requireKey(): NaturalKey<E> {
    if (!this.spec.naturalKey) throw new Error(`${this.spec.label} has no natural key`);
    return this.spec.naturalKey;
  }

  private keyColumns(em: EntityManager, key: NaturalKey<E>) {
    const meta = em.getMetadata().get(this.spec.entity.name);
    const column = (prop: string) => meta.properties[prop as keyof typeof meta.properties]!.fieldNames[0]!;
    return { table: meta.tableName, columns: key.fields.map(column), scopeColumn: key.scope ? column(key.scope) : null };
  }

  /** The wire name of a property, for error details. */
  private wireFieldOf(property: string): string {
    const entries = Object.entries(this.spec.wire) as [string, FieldMapping<E>][];
    return entries.find(([, how]) => how === property)?.[0] ?? property;
  }
}
