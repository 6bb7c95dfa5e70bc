import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import { PROJECT_ROOT } from '../paths';

/**
 * The database's functions and triggers, each in a file of its own under src/db/sql/ (its README says how to change
 * one), applied after the migrations on every start: their current definitions live in one place, not in whichever
 * migration restated them last. Read from the project's folder, like schemas/, whether the process runs from src/ or
 * dist/.
 */
export const SQL_DIR = path.join(PROJECT_ROOT, 'src', 'db', 'sql');

/** The order they are applied in: functions (any order: their bodies are checked when called), then the triggers that call them. */
export const SQL_FOLDERS = ['functions', 'triggers'] as const;

export interface SqlFile {
  /** `functions/admit_request.sql`. */
  name: string;
  text: string;
  checksum: string;
}

/** Every file of src/db/sql, in the order they are applied. */
export function sqlFiles(): SqlFile[] {
  return SQL_FOLDERS.flatMap((folder) =>
    readdirSync(path.join(SQL_DIR, folder))
      .filter((file) => file.endsWith('.sql'))
      .sort()
      .map((file) => {
        const text = readFileSync(path.join(SQL_DIR, folder, file), 'utf8');
        return { name: `${folder}/${file}`, text, checksum: createHash('sha256').update(text).digest('hex') };
      }),
  );
}

/**
 * Applies the files whose checksum differs from the one recorded in repeatable_sql (each file a `create or replace`),
 * in one transaction under an advisory lock, so that replicas starting together apply them once; an unchanged file
 * costs nothing, and when none changed it is one read. Returns the files applied.
 */
export async function applyRepeatableSql(em: EntityManager): Promise<string[]> {
  const files = sqlFiles();
  const recorded = async (db: EntityManager) =>
    new Map((await db.execute<{ file: string; checksum: string }[]>('select file, checksum from repeatable_sql')).map((row) => [row.file, row.checksum]));
  const changed = (applied: Map<string, string>) => files.filter((file) => applied.get(file.name) !== file.checksum);
  if (changed(await recorded(em)).length === 0) return [];
  return em.transactional(async (tx) => {
    await tx.execute("select pg_advisory_xact_lock(hashtext('repeatable_sql'))");
    const pending = changed(await recorded(tx));
    // As pg_dump does: a SQL function's body names tables and functions that the order of the files need not know.
    await tx.execute('set local check_function_bodies = off');
    for (const file of pending) {
      await tx.execute(file.text);
      await tx.execute('insert into repeatable_sql (file, checksum, applied_at) values (?, ?, now()) on conflict (file) do update set checksum = excluded.checksum, applied_at = now()', [
        file.name,
        file.checksum,
      ]);
    }
    await tx.execute('delete from repeatable_sql where file <> all(?::text[])', [`{${files.map((file) => `"${file.name}"`).join(',')}}`]);
    return pending.map((file) => file.name);
  });
}
