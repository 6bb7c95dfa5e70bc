import { type Collection, type EntityName, type FilterQuery, type QueryOrderMap, raw, type Reference } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { COUNTED_TABLES, RECORD_COUNT_SQL } from './record-counts';

/** A validated page request of a list endpoint. */
export interface Page {
  limit: number;
  offset: number;
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

export interface PageOf<T> {
  items: Row<T>[];
  total: number;
}

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
 */
export async function findPage<T extends object>(
  em: EntityManager,
  entity: EntityName<T>,
  where: FilterQuery<T>,
  orderBy: QueryOrderMap<T>,
  page: Page,
  columns: Record<string, string> = {},
): Promise<PageOf<T>> {
  const { tableName } = em.getMetadata().find(entity)!;
  const total = onlyCompany(where) && COUNTED_TABLES.has(tableName)
    ? raw(`${RECORD_COUNT_SQL} as total_matches`, [where.company, tableName])
    : em.createQueryBuilder(entity, 'c').count().where(where).as('total_matches');
  const pageIds = em.createQueryBuilder(entity, 'p').select('p.id').where(where).orderBy(orderBy).limit(page.limit).offset(page.offset);
  const rows = await em
    .createQueryBuilder(entity, 'r')
    .select(['*', ...extraColumns(columns), total])
    .where({ id: { $in: pageIds.getKnexQuery() } } as unknown as FilterQuery<T>)
    .orderBy(orderBy)
    .execute<(Row<T> & { total_matches?: string })[]>('all', true);
  // An empty page says nothing about the total when it lies past the end.
  const count = rows.length > 0 ? Number(rows[0]!.total_matches) : page.offset > 0 ? await countMatches(em, entity, where, tableName) : 0;
  // The last property of each row: deleting it keeps the row a fast object (a rest copy of 40 columns per row cost more).
  for (const row of rows) delete row.total_matches;
  return { items: rows, total: count };
}

/** `rowColumns` of a RecordSpec as select expressions over the row `r`. */
const extraColumns = (columns: Record<string, string>) => Object.entries(columns).map(([name, sql]) => raw(`(${sql}) as "${name}"`));

async function countMatches<T extends object>(em: EntityManager, entity: EntityName<T>, where: FilterQuery<T>, tableName: string): Promise<number> {
  if (!(onlyCompany(where) && COUNTED_TABLES.has(tableName))) return em.count(entity, where);
  const [row] = await em.execute<{ n: string }[]>(`select ${RECORD_COUNT_SQL} as n`, [where.company, tableName]);
  return Number(row!.n);
}

/** The one row matching `where`, as a plain row (see findPage), or null. */
export async function findRow<T extends object>(
  em: EntityManager,
  entity: EntityName<T>,
  where: FilterQuery<T>,
  columns: Record<string, string> = {},
): Promise<Row<T> | null> {
  const [row] = await em
    .createQueryBuilder(entity, 'r')
    .select(['*', ...extraColumns(columns)])
    .where(where)
    .limit(1)
    .execute<Row<T>[]>('all', true);
  return row ?? null;
}
