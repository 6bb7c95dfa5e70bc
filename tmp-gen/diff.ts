import { startEmbeddedPostgres } from '../src/db/embedded-postgres';
import { connectOrm, migrate } from '../src/db/orm';
(async () => {
  const db = await startEmbeddedPostgres({ dataDir: '/tmp/diff-data', port: 55998, database: 'construction', onLog: (l) => process.stderr.write(l) });
  const orm = await connectOrm(db.url);
  await migrate(orm);
  console.log(await orm.getSchemaGenerator().getUpdateSchemaSQL({ wrap: false, dropTables: false }));
  await orm.close(); await db.stop();
})().catch((e) => { console.error(e); process.exit(1); });
