import { exitOnUnsupportedNode } from './runtime-version';
import { connectOrm, migrate } from './database';

exitOnUnsupportedNode();

/** `npm run migrate`: applies pending migrations to DATABASE_URL and exits (deploy step before api/worker). */
async function main() {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is required');
  const orm = await connectOrm(url, 1);
  try {
    const applied = await migrate(orm);
    console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'Database is up to date');
  } finally {
    await orm.close();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
