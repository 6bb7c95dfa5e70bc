import { rmSync } from 'node:fs';
import { Client } from 'pg';

/** Drops the databases this run copied (they matter on a DATABASE_URL of your own), then stops services. */
export default async function globalTeardown(): Promise<void> {
  const admin = new Client({ connectionString: Object.assign(new URL(process.env.DATABASE_URL!), { pathname: '/postgres' }).toString() });
  await admin.connect();
  const { rows } = await admin.query<{ datname: string }>('select datname from pg_database where datname like $1', [`${process.env.TEST_RUN_ID}\\_%`]);
  for (const { datname } of rows) await admin.query(`drop database "${datname}" with (force)`);
  await admin.end();
  await (globalThis as { __stopTestServices?: () => Promise<void> }).__stopTestServices?.();
  if (process.env.TEST_DATA_DIR) rmSync(process.env.TEST_DATA_DIR, { recursive: true, force: true });
}
