import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Serialises find-or-create on a natural key (e.g. a customer name) across transactions and processes:
 * the lock is held until the surrounding transaction ends, so a second creator waits and then finds the
 * first one's row instead of failing on the unique index. Must be called inside a transaction. A plain
 * create of a key that a unique index guards does not take it (RecordService, NaturalKey.uniqueIndex).
 */
export async function lockNaturalKey(em: EntityManager, ...parts: string[]): Promise<void> {
  await em.execute('select pg_advisory_xact_lock(hashtextextended(?, 0))', [naturalKey(...parts)]);
}

/** The text whose hash names the advisory lock of a natural key. */
export const naturalKey = (...parts: string[]): string => parts.join('\u001f').toLowerCase();

/**
 * The id of the row whose text columns equal `match` case-insensitively (as the unique indexes on
 * lower(name) compare them), within `scope` (exact column values such as company_id).
 */
export async function findIdIgnoringCase(
  em: EntityManager,
  table: string,
  scope: Record<string, string>,
  match: Record<string, string>,
): Promise<string | null> {
  const conditions = [
    ...Object.keys(scope).map((column) => `"${column}" = ?`),
    ...Object.keys(match).map((column) => `lower("${column}") = lower(?)`),
  ];
  const [row] = await em.execute<{ id: string }[]>(`select id from "${table}" where ${conditions.join(' and ')} limit 1`, [
    ...Object.values(scope),
    ...Object.values(match).map((v) => v.trim()),
  ]);
  return row?.id ?? null;
}
