import { type Collection, type EntityDictionary, type EntityMetadata, type EntityName, type FilterQuery, type QueryOrderMap, raw, type Reference, ReferenceKind } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { PreparedStatement } from '../db/prepared-statement';
import { ApiError } from '../errors';
import { isUuid, parseTimestamp } from '../schemas/formats';
import { COUNTED_TABLES, RECORD_COUNT_SQL } from './record-counts';

/**
 * A position in a list, from an `after` cursor: the list's key (its table and order, so that a cursor of one
 * list is refused by another) and the last record's sort values, its id last.
 */
export interface Cursor {
  list: string;
  keys: (string | null)[];
}

/** A validated page request of a list endpoint: by offset, or (offset 0) after a cursor. */
export interface Page {
  limit: number;
  offset: number;
  after?: Cursor;
}

/**
 * Longest `after` accepted: a cursor this service makes is about 150 characters, under 1,000 with the longest
 * text it sorts by (a skill's name, 100 characters).
 */
export const MAX_CURSOR_LENGTH = 2048;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** The opaque cursor (base64url JSON, `{ "l": list, "k": keys }`) a client sends back as `after`. */
export const encodeCursor = (cursor: Cursor): string => Buffer.from(JSON.stringify({ l: cursor.list, k: cursor.keys })).toString('base64url');

/** The cursor an `after` value holds; null when it is not one this service can have made. */
export function decodeCursor(text: string): Cursor | null {
  if (text.length > MAX_CURSOR_LENGTH || !BASE64URL.test(text)) return null;
  const bytes = Buffer.from(text, 'base64url');
  // Only the canonical encoding: no stray bits in the last character, no trailing garbage.
  if (bytes.toString('base64url') !== text) return null;
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const { l, k, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || typeof l !== 'string' || l.length === 0 || l.length > 100) return null;
  if (!Array.isArray(k) || k.length < 1 || k.length > 8 || !k.every((key) => key === null || (typeof key === 'string' && key.length <= 500))) return null;
  return { list: l, keys: k as (string | null)[] };
}

/** The 400 of an `after` that is not a cursor of this list. */
export const invalidCursor = (reason = 'is not a cursor of this list (pass the next_cursor of a page of the same list)') => ApiError.invalid('after', reason);

/** created_at and other instants in a cursor: UTC with microseconds, as PostgreSQL keeps them. */
const CURSOR_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const isCursorInstant = (text: string) => CURSOR_INSTANT.test(text) && parseTimestamp(text) !== null;

/** How a list is sorted: by one column, then id, both the same way (the keyset a cursor continues from). */
interface Sort {
  /** The list's key in its cursors: table, column and direction. */
  list: string;
  column: string;
  descending: boolean;
  /** The column as its cursor holds it (exact: an instant with its microseconds), over the row `alias`. */
  keySql(alias: string): string;
  /** The SQL type a cursor's sort value is cast to. */
  cast: string;
  validKey(key: string): boolean;
}

const sorts = new Map<string, Sort>();

function sortOf(meta: EntityMetadata, orderBy: Record<string, string>): Sort {
  const cacheKey = `${meta.className} ${JSON.stringify(orderBy)}`;
  let sort = sorts.get(cacheKey);
  if (sort) return sort;
  const entries = Object.entries(orderBy);
  const [[prop, direction] = [], [last, lastDirection] = []] = entries;
  const lower = direction?.toLowerCase();
  if (entries.length !== 2 || last !== 'id' || lastDirection?.toLowerCase() !== lower || (lower !== 'asc' && lower !== 'desc')) {
    throw new Error(`findPage orders by one column then id, both asc or both desc (${meta.className}: ${JSON.stringify(orderBy)})`);
  }
  const property = meta.properties[prop!]!;
  const column = property.fieldNames[0]!;
  const columnType = property.columnTypes[0]!.toLowerCase();
  const instant = columnType.startsWith('timestamptz') || columnType.startsWith('timestamp with time zone');
  // A null would never compare as after a cursor: such a row would be left out of every page after the first.
  if (property.nullable || (!instant && !/^(text|varchar|character varying)/.test(columnType))) throw new Error(`findPage cannot page by ${meta.className}.${prop} (${columnType})`);
  sort = {
    list: `${meta.tableName}.${column}.${lower}`,
    column,
    descending: lower === 'desc',
    keySql: (alias) => (instant ? `to_char("${alias}"."${column}" at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')` : `"${alias}"."${column}"`),
    cast: instant ? 'timestamptz' : 'text',
    validKey: instant ? isCursorInstant : () => true,
  };
  sorts.set(cacheKey, sort);
  return sort;
}

/** The condition that keeps the rows after the cursor in the list's order, over the row `alias` (parameters: sort value, id). */
const keysetSql = (sort: Sort, alias: string) => `("${alias}"."${sort.column}", "${alias}"."id") ${sort.descending ? '<' : '>'} (?::${sort.cast}, ?::uuid)`;

/** The cursor's sort value and id, when it is a cursor of this list; else a 400. */
function cursorKeys(sort: Sort, cursor: Cursor): [string, string] {
  const [key, id, ...rest] = cursor.keys;
  if (cursor.list !== sort.list || rest.length > 0 || typeof key !== 'string' || typeof id !== 'string' || !sort.validKey(key) || !isUuid(id)) throw invalidCursor();
  return [key, id];
}

/** A relation as a list row has it (the id) or as a loaded entity has it (a reference). */
export type IdRef = string | { id: string };

export const idOf = (ref: IdRef | null): string | null => (ref === null ? null : typeof ref === 'string' ? ref : ref.id);

/** An entity's columns as plain values: relations are their ids, collections are left out. */
export type Row<T> = {
  [K in keyof T as T[K] extends Collection<object> ? never : K]: T[K] extends Reference<object> ? string : T[K] extends Reference<object> | null ? string | null : T[K];
};

/** What a serializer reads: an entity or its Row alike (relations as an id or a reference). */
export type View<T> = {
  [K in keyof T as T[K] extends Collection<object> ? never : K]: T[K] extends Reference<object> ? IdRef : T[K] extends Reference<object> | null ? IdRef | null : T[K];
};

/** A page of a list: its records, the exact total of the list, and the cursor of the next page (null on the last). */
export interface ListPage<T> {
  items: T[];
  total: number;
  /** The `after` of the next page; null on the last one. */
  next: string | null;
}

export type PageOf<T> = ListPage<Row<T>>;

/** Whether `where` asks for all of a company's records, the list whose total record_counts keeps. */
const onlyCompany = (where: object): where is { company: string } => {
  const keys = Object.keys(where);
  return keys.length === 1 && keys[0] === 'company' && typeof (where as { company: unknown }).company === 'string';
};

/**
 * One page of a list and the exact total number of matches in one statement, as plain rows: lists are
 * read-only, and skipping entity hydration and change tracking makes them about three times cheaper.
 *
 * The cost stays flat with the number of rows skipped and matched: the page's ids come from the ordering index
 * alone (an index-only scan reads no table rows for the records skipped), then only the page's rows are read;
 * a company's unfiltered total comes from record_counts, a filtered one from a count of its own that can also
 * be answered from an index.
 *
 * A page after a cursor starts where the cursor's row was, `(column, id) > (its values)` (`<` when descending),
 * which the ordering index answers with a range scan: no row before it is read, however deep it lies. The
 * total stays that of the whole list. One row more than the page is read to tell whether another page follows
 * (`next`, the cursor of the page's last row).
 */
export async function findPage<T extends object>(
  em: EntityManager,
  entity: EntityName<T>,
  where: FilterQuery<T>,
  orderBy: QueryOrderMap<T>,
  page: Page,
  columns: Record<string, string> = {},
): Promise<PageOf<T>> {
  const meta = em.getMetadata().find(entity)!;
  const { tableName } = meta;
  const sort = sortOf(meta, orderBy as Record<string, string>);
  const after = page.after ? cursorKeys(sort, page.after) : null;
  let rows: (Row<T> & { page_key?: string; total_matches?: string })[];
  if (onlyCompany(where) && COUNTED_TABLES.has(tableName)) {
    // The most common list, by far: its statement is written once rather than built per request.
    const found = await em.execute<EntityDictionary<T>[]>(companyPageSql(meta, sort, orderBy as Record<string, string>, columns, after !== null), [
      where.company,
      tableName,
      where.company,
      ...(after ?? []),
      page.limit + 1,
      page.offset,
    ]);
    const driver = em.getDriver();
    rows = found.map((row) => driver.mapResult(row, meta) as Row<T> & { total_matches?: string });
  } else {
    const pageIds = em.createQueryBuilder(entity, 'p').select('p.id').where(where);
    if (after) pageIds.andWhere(keysetSql(sort, 'p'), after);
    pageIds.orderBy(orderBy).limit(page.limit + 1).offset(page.offset);
    rows = await em
      .createQueryBuilder(entity, 'r')
      .select(['*', ...extraColumns(columns), raw(`${sort.keySql('r')} as page_key`), em.createQueryBuilder(entity, 'c').count().where(where).as('total_matches')])
      .where({ id: { $in: pageIds.getKnexQuery() } } as unknown as FilterQuery<T>)
      .orderBy(orderBy)
      .execute<(Row<T> & { page_key?: string; total_matches?: string })[]>('all', true);
  }
  const more = rows.length > page.limit;
  if (more) rows.pop();
  nestEmbedded(meta, rows);
  // An empty page says nothing about the total when it lies past the end (or after the last record).
  const count = rows.length > 0 ? Number(rows[0]!.total_matches) : page.offset > 0 || after ? await countMatches(em, entity, where, tableName) : 0;
  const last = rows.at(-1);
  const next = more && last ? encodeCursor({ list: sort.list, keys: [last.page_key!, (last as { id: string }).id] }) : null;
  // The last properties of each row: deleting them, last first, keeps the row a fast object (a rest copy of 40
  // columns per row cost more).
  for (const row of rows) {
    delete row.total_matches;
    delete row.page_key;
  }
  return { items: rows, total: count, next };
}

/**
 * The cursor that continues a list after one of its records (`where` names it: its id and company), or null when
 * there is no such record: what a list that took a record's id as `after` turns it into.
 */
export async function cursorAfter<T extends object>(em: EntityManager, entity: EntityName<T>, orderBy: QueryOrderMap<T>, where: FilterQuery<T>): Promise<Cursor | null> {
  const sort = sortOf(em.getMetadata().find(entity)!, orderBy as Record<string, string>);
  const [row] = await em
    .createQueryBuilder(entity, 'r')
    .select([raw(`${sort.keySql('r')} as page_key`), 'r.id'])
    .where(where)
    .limit(1)
    .execute<{ page_key: string; id: string }[]>('all', false);
  return row ? { list: sort.list, keys: [row.page_key, row.id] } : null;
}

/** `rowColumns` of a RecordSpec as select expressions over the row `r`. */
const extraColumns = (columns: Record<string, string>) => Object.entries(columns).map(([name, sql]) => raw(`(${sql}) as "${name}"`));

const companyPages = new Map<string, string>();

/**
 * The statement the query builder makes for a company's unfiltered page (parameters: company, table, company,
 * with a cursor its sort value and id, then limit, offset), written once per entity, order, extra columns and
 * whether a cursor is given.
 */
function companyPageSql(meta: EntityMetadata, sort: Sort, orderBy: Record<string, string>, columns: Record<string, string>, afterCursor: boolean): string {
  const key = `${meta.className} ${JSON.stringify(orderBy)} ${JSON.stringify(columns)} ${afterCursor}`;
  let sql = companyPages.get(key);
  if (!sql) {
    const order = (alias: string) =>
      Object.entries(orderBy)
        .map(([prop, direction]) => `"${alias}"."${meta.properties[prop]!.fieldNames[0]}" ${direction}`)
        .join(', ');
    const extra = Object.entries(columns).map(([name, select]) => `, (${select}) as "${name}"`).join('');
    const company = meta.properties.company!.fieldNames[0];
    sql =
      `select "r".*${extra}, ${sort.keySql('r')} as page_key, ${RECORD_COUNT_SQL} as total_matches from "${meta.tableName}" as "r" ` +
      `where "r"."id" in (select "p"."id" from "${meta.tableName}" as "p" where "p"."${company}" = ?${afterCursor ? ` and ${keysetSql(sort, 'p')}` : ''} ` +
      `order by ${order('p')} limit ? offset ?) ` +
      `order by ${order('r')}`;
    companyPages.set(key, sql);
  }
  return sql;
}

async function countMatches<T extends object>(em: EntityManager, entity: EntityName<T>, where: FilterQuery<T>, tableName: string): Promise<number> {
  if (!(onlyCompany(where) && COUNTED_TABLES.has(tableName))) return em.count(entity, where);
  const [row] = await em.execute<{ n: string }[]>(`select ${RECORD_COUNT_SQL} as n`, [where.company, tableName]);
  return Number(row!.n);
}

const recordRows = new Map<string, PreparedStatement<EntityDictionary<object>>>();
let recordRowStatements = 0;

const TABLE_COLUMNS = new PreparedStatement<{ columns: string }>(
  'table-columns',
  `select string_agg(format('"r".%I', attname), ', ' order by attnum) as columns
     from pg_attribute where attrelid = $1::regclass and attnum > 0 and not attisdropped`,
);

/**
 * A company's record by id as a plain row (see findPage), or null. Its statement is prepared once per entity, with
 * the table's columns named rather than `*`: a prepared statement's result cannot change, so a column a later
 * release's migration adds would otherwise make PostgreSQL refuse it on this process's connections.
 */
export async function findRow<T extends object>(
  em: EntityManager,
  entity: EntityName<T>,
  key: { companyId: string; id: string },
  columns: Record<string, string> = {},
): Promise<Row<T> | null> {
  const meta = em.getMetadata().find(entity)! as EntityMetadata;
  const cacheKey = `${meta.className} ${JSON.stringify(columns)}`;
  let statement = recordRows.get(cacheKey);
  if (!statement) {
    const [table] = await TABLE_COLUMNS.rows(em, [`"${meta.tableName}"`]);
    const extra = Object.entries(columns).map(([name, select]) => `, (${select}) as "${name}"`).join('');
    const sql = `select ${table!.columns}${extra} from "${meta.tableName}" as "r" where "r"."id" = $1 and "r"."${meta.properties.company!.fieldNames[0]}" = $2 limit 1`;
    statement = new PreparedStatement(`record-row-${++recordRowStatements}`, sql);
    recordRows.set(cacheKey, statement);
  }
  const [row] = await statement.rows(em, [key.id, key.companyId]);
  if (!row) return null;
  const mapped = em.getDriver().mapResult(row, meta) as unknown as Row<T>;
  nestEmbedded(meta, [mapped]);
  return mapped;
}

/** Per entity: each inline embedded value's property, and its members with the keys a mapped row has them under. */
const embeddedValues = new Map<string, [string, [string, string][]][]>();

/**
 * Gives rows the embedded values an entity has (`address: { city, … }`): the driver maps their columns to flat
 * keys (`address_city`), which stay (deleting them would make each row a slow object).
 */
function nestEmbedded(meta: EntityMetadata, rows: object[]): void {
  let embedded = embeddedValues.get(meta.className);
  if (!embedded) {
    embedded = meta.props
      .filter((p) => p.kind === ReferenceKind.EMBEDDED && !p.object && !p.embedded)
      .map((p) => [p.name, Object.entries(p.embeddedProps).map(([member, flat]) => [member, flat.name])]);
    embeddedValues.set(meta.className, embedded);
  }
  for (const row of rows as Record<string, unknown>[]) {
    for (const [property, members] of embedded) {
      const value: Record<string, unknown> = {};
      for (const [member, key] of members) value[member] = row[key] ?? null;
      row[property] = value;
    }
  }
}
