import type { EntityClass } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../errors';
import type { PostalAddress } from '../common/postal-address';
import type { CompanyRecord } from '../company-record';
import { idOf, type IdRef, type View } from '../page';

/** A property of the entity, or a part of its embedded postal address (`address.city`). */
export type PropertyPath<E> =
  | (keyof E & string)
  | { [K in keyof E & string]: E[K] extends PostalAddress ? `${K}.${keyof PostalAddress & string}` : never }[keyof E & string];

/**
 * How one wire field (the snake_case name REST and inbound use) maps onto an entity: the one place a
 * record's fields are renamed, in both directions.
 */
export type FieldMapping<E> =
  /** A property (or a part of an embedded value) holding the same value as the wire field. */
  | PropertyPath<E>
  /** A many-to-one relation: an id on the wire, checked to be the company's own record on write. */
  | { relation: keyof E & string; target: EntityClass<CompanyRecord>; label: string }
  /** A wire object whose members are properties of the entity (e.g. billing_address). */
  | { nested: Record<string, PropertyPath<E>> }
  /**
   * Anything else: normalised input, derived output, or references found (or made) in the company's records.
   * Without `write` the field is read-only (the schemas do not accept it).
   */
  | { read(view: View<E>): unknown; write?(entity: E, value: unknown, context: WriteContext): void | Promise<void> };

/** Where a custom field is written: the transaction, the company, and the wire name (for errors). */
export interface WriteContext {
  em: EntityManager;
  companyId: string;
  field: string;
}

/** What every record has, read from an entity or a list row. */
interface RecordBasics {
  id: string;
  createdAt: Date;
  updatedAt: Date;
}

/** Every field of a record's wire form except the ones every record has (id, created_at, updated_at). */
export type WireMapping<E, Wire> = { [K in Exclude<keyof Wire, 'id' | 'created_at' | 'updated_at'>]: FieldMapping<E> };

/** Leading and trailing spaces never carry meaning in a field; trimming keeps names comparable. */
const clean = (value: unknown) => (typeof value === 'string' ? value.trim() : value);

type Reader<E> = (source: Record<string, unknown>, view: View<E>) => unknown;

type Values = Record<string, unknown>;

/** Reads the value at a property path; a path's two names are split once, not per row. */
function pathReader(path: string): (source: Values) => unknown {
  const [outer, inner] = path.split('.') as [string, string | undefined];
  if (inner === undefined) return (source) => source[outer] ?? null;
  return (source) => (source[outer] as Values)[inner] ?? null;
}

function writePath(target: Values, path: string, value: unknown): void {
  const [outer, inner] = path.split('.') as [string, string | undefined];
  if (inner === undefined) target[outer] = value;
  else (target[outer] as Values)[inner] = value;
}

function readerOf<E>(how: FieldMapping<E>): Reader<E> {
  if (typeof how === 'string') return pathReader(how);
  if ('relation' in how) return (source) => idOf((source[how.relation] as IdRef | null | undefined) ?? null);
  if ('nested' in how) {
    const members = Object.entries(how.nested).map(([member, path]) => [member, pathReader(path)] as const);
    return (source) => {
      const nested: Record<string, unknown> = {};
      for (const [member, read] of members) nested[member] = read(source);
      return nested;
    };
  }
  return (_source, view) => how.read(view);
}

/** Each mapping's readers, made once: lists read every field of up to 100 rows per request. */
const readers = new WeakMap<object, [string, Reader<never>][]>();

function readersOf<E>(mapping: object): [string, Reader<E>][] {
  let list = readers.get(mapping);
  if (!list) {
    list = Object.entries(mapping).map(([field, how]) => [field, readerOf(how as FieldMapping<never>)]);
    readers.set(mapping, list);
  }
  return list as [string, Reader<E>][];
}

/** The record's wire form, from an entity or a list row alike. */
export function toWire<E extends CompanyRecord, Wire>(mapping: WireMapping<E, Wire>, view: E | View<E>): Wire {
  const basics = view as unknown as RecordBasics;
  const source = view as unknown as Record<string, unknown>;
  const wire: Record<string, unknown> = { id: basics.id };
  for (const [field, read] of readersOf<E>(mapping)) wire[field] = read(source, view as View<E>);
  wire.created_at = basics.createdAt.toISOString();
  wire.updated_at = basics.updatedAt.toISOString();
  return wire as Wire;
}

/**
 * Writes the fields present in `input` (a create body or a partial update) onto the entity. Relations must
 * name a record of the same company, else 400 naming the field.
 */
export async function applyWire<E extends CompanyRecord>(
  em: EntityManager,
  companyId: string,
  mapping: WireMapping<E, object>,
  entity: E,
  input: object,
): Promise<void> {
  const target = entity as unknown as Record<string, unknown>;
  const given = input as Record<string, unknown>;
  // In the mapping's order, whatever the input's: writes that take locks (a department found or made) take them in one order.
  for (const [field, how] of Object.entries(mapping) as [string, FieldMapping<E>][]) {
    const value = given[field];
    if (value === undefined) continue;
    if (typeof how === 'string') writePath(target, how, clean(value));
    else if ('relation' in how) target[how.relation] = value === null ? null : await companyReference(em, companyId, how, field, value as string);
    else if ('nested' in how) {
      // null clears every member; an object changes the members it names.
      const members = value === null ? Object.fromEntries(Object.keys(how.nested).map((m) => [m, null])) : (value as Record<string, unknown>);
      for (const [member, memberValue] of Object.entries(members)) {
        if (memberValue !== undefined && how.nested[member]) writePath(target, how.nested[member], clean(memberValue));
      }
    } else if (how.write) await how.write(entity, clean(value), { em, companyId, field });
    else throw new Error(`${field} is read-only`);
  }
}

async function companyReference(
  em: EntityManager,
  companyId: string,
  how: { target: EntityClass<CompanyRecord>; label: string },
  field: string,
  id: string,
) {
  const found = await em.count(how.target, { id, company: companyId });
  if (found === 0) throw ApiError.invalid(field, `does not match ${how.label} of your company`);
  return em.getReference(how.target, id, { wrapped: true });
}

/** `coordinates` on the wire ({latitude, longitude}, members null when unknown) ↔ two number properties. */
export function coordinatesField<E extends { latitude: number | null; longitude: number | null }>(): FieldMapping<E> {
  return {
    read: (view) => {
      const { latitude, longitude } = view as unknown as E;
      return { latitude, longitude };
    },
    write: (entity, value) => {
      const point = value as { latitude: number; longitude: number } | null;
      entity.latitude = point?.latitude ?? null;
      entity.longitude = point?.longitude ?? null;
    },
  };
}
