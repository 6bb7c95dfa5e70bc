import { MikroORM } from '@mikro-orm/core';
import { Migrator } from '@mikro-orm/migrations';
import { defineConfig, type PostgreSqlDriver } from '@mikro-orm/postgresql';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations';

export type Orm = MikroORM<PostgreSqlDriver>;

export function ormConfig(databaseUrl: string, poolMax = 10) {
  return defineConfig({
    clientUrl: databaseUrl,
    entities: ENTITIES,
    pool: { min: 0, max: poolMax },
    forceUtcTimezone: true,
    // Missing references are a programming error here, never something to load lazily behind our back.
    allowGlobalContext: false,
    extensions: [Migrator],
    migrations: { migrationsList: MIGRATIONS, transactional: true, allOrNothing: true, snapshot: false, silent: true },
    discovery: { warnWhenNoEntities: true },
  });
}

export async function connectOrm(databaseUrl: string, poolMax?: number): Promise<Orm> {
  return MikroORM.init<PostgreSqlDriver>(ormConfig(databaseUrl, poolMax));
}

/** Applies every pending migration; safe to run from several processes (the migrator takes a lock table). */
export async function migrate(orm: Orm): Promise<string[]> {
  const applied = await orm.getMigrator().up();
  return applied.map((m) => m.name);
}
