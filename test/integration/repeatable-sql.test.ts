import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { connectOrm } from '../../src/database';
import { MIGRATIONS } from '../../src/db/migrations';
import { applyRepeatableSql, sqlFiles } from '../../src/db/repeatable-sql';
import type { EntityManager } from '@mikro-orm/postgresql';
import { PROJECT_ROOT } from '../../src/paths';
import { createTestDatabase } from '../helpers/stack';

/** The migration from which on no migration defines a function or trigger: they live in src/db/sql/. */
const FILES_SINCE = 'Migration20261211000000RepeatableSql';

/** Each function of the public schema (an extension's left out) by name and arguments, with its definition. */
async function functionsOf(db: Client, schema: string): Promise<Map<string, string>> {
  const { rows } = await db.query<{ signature: string; definition: string }>(
    `select p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')' as signature, pg_get_functiondef(p.oid) as definition
       from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = $1 and not exists (select 1 from pg_depend d where d.objid = p.oid and d.deptype = 'e')`,
    [schema],
  );
  return new Map(rows.map((row) => [row.signature, row.definition.replaceAll(`${schema}.`, '')]));
}

/** Every trigger of the public schema's tables (not those PostgreSQL makes for constraints), by name, with its definition. */
async function triggersOf(db: Client): Promise<Map<string, string>> {
  const { rows } = await db.query<{ name: string; definition: string }>(
    `select t.tgname as name, pg_get_triggerdef(t.oid) as definition from pg_trigger t join pg_class c on c.oid = t.tgrelid
       join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public' and not t.tgisinternal`,
  );
  return new Map(rows.map((row) => [row.name, row.definition]));
}

describe('functions and triggers in src/db/sql', () => {
  let url: string;
  let db: Client;

  beforeAll(async () => {
    url = await createTestDatabase();
    db = new Client({ connectionString: url });
    await db.connect();
  });
  afterAll(() => db.end());

  it("are exactly the database's: every function as its file defines it, and no other", async () => {
    const live = await functionsOf(db, 'public');
    await db.query('begin');
    try {
      // Each file's function made in a schema of its own, to compare with the one the database runs.
      await db.query('create schema sql_files; set local search_path = sql_files, public; set local check_function_bodies = off');
      for (const file of sqlFiles().filter((f) => f.name.startsWith('functions/'))) await db.query(file.text);
      const fromFiles = await functionsOf(db, 'sql_files');
      expect([...fromFiles.keys()].sort()).toEqual([...live.keys()].sort());
      for (const [signature, definition] of fromFiles) expect({ signature, definition }).toEqual({ signature, definition: live.get(signature) });
    } finally {
      await db.query('rollback');
    }
  });

  it("are exactly the database's: every trigger as its file defines it, and no other", async () => {
    const live = await triggersOf(db);
    await db.query('begin');
    try {
      for (const [name, definition] of live) await db.query(`drop trigger ${name} on ${/ ON (\S+) /.exec(definition)![1]}`);
      for (const file of sqlFiles().filter((f) => f.name.startsWith('triggers/'))) await db.query(file.text);
      const fromFiles = await triggersOf(db);
      expect(Object.fromEntries([...fromFiles].sort())).toEqual(Object.fromEntries([...live].sort()));
    } finally {
      await db.query('rollback');
    }
  });

  it('are applied when they change, once, and cost one read when none did', async () => {
    const orm = await connectOrm(url, 1);
    try {
      const em = () => orm.em.fork() as EntityManager;
      expect(await applyRepeatableSql(em())).toEqual([]);
      await db.query(`update repeatable_sql set checksum = 'changed' where file = 'functions/iso_utc.sql'`);
      await db.query(`create or replace function iso_utc(p_at timestamptz) returns text language sql immutable as $$ select 'stale' $$`);
      expect(await applyRepeatableSql(em())).toEqual(['functions/iso_utc.sql']);
      expect((await db.query(`select iso_utc('2026-01-02T03:04:05.678Z') as at`)).rows[0].at).toBe('2026-01-02T03:04:05.678Z');
      expect(await applyRepeatableSql(em())).toEqual([]);
    } finally {
      await orm.close();
    }
  });

  it('are defined by no migration from theirs on', () => {
    const since = MIGRATIONS.findIndex((migration) => migration.name === FILES_SINCE);
    expect(since).toBeGreaterThanOrEqual(0);
    const defining = MIGRATIONS.slice(since).filter((migration) =>
      /create\s+(or\s+replace\s+)?(function|procedure|(constraint\s+)?trigger)\b/i.test(readFileSync(path.join(PROJECT_ROOT, 'src/db/migrations', `${migration.name}.ts`), 'utf8')),
    );
    expect(defining.map((migration) => migration.name)).toEqual([]);
  });
});
