import type { MikroORM } from '@mikro-orm/core';
import type { PostgreSqlDriver } from '@mikro-orm/postgresql';

/** The ORM the processes share; src/database.ts opens it with every entity mapped, and migrates it. */
export type Orm = MikroORM<PostgreSqlDriver>;
