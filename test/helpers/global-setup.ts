import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '../../src/db/embedded-postgres';
import { connectOrm, migrate } from '../../src/database';
import { bundleWorkflows } from '../../src/worker/workflow-bundle';
import { startTemporalDevServer } from '../../src/temporal/dev-server';
import { OPT_OUTS, optedOut } from './opt-outs';
import { freePort } from './ports';
import { provisionTemporalTestServer } from './temporal-test-server';

/**
 * Provisions the way `npm start` does: DATABASE_URL / TEMPORAL_ADDRESS when set, else an embedded
 * PostgreSQL and a Temporal dev server in a temporary folder. Migrates, builds the workflow bundle once,
 * and hands everything to the test files through the environment.
 */
export default async function globalSetup(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'construction-test-'));
  const stops: (() => Promise<void>)[] = [];
  // Refused in CI before anything starts: CI runs every test.
  for (const name of OPT_OUTS) optedOut(name);
  process.env.LOG_LEVEL ??= 'silent';
  // Prefix of the databases test files copy from the migrated one (see createTestDatabase).
  process.env.TEST_RUN_ID = `test_${randomBytes(4).toString('hex')}`;
  process.env.ENCRYPTION_KEY ??= randomBytes(32).toString('hex');

  if (!process.env.DATABASE_URL) {
    const db = await startEmbeddedPostgres({ dataDir: dir, port: await freePort(), database: 'construction_test' });
    stops.push(async () => {
      await db.stop();
      // As root, with a TMPDIR the postgres user cannot enter, the cluster lives outside `dir`.
      rmSync(db.clusterDir, { recursive: true, force: true });
    });
    process.env.DATABASE_URL = db.url;
  }
  if (!process.env.TEMPORAL_ADDRESS) {
    const temporal = await startTemporalDevServer({ namespace: 'default' });
    stops.push(temporal.stop);
    process.env.TEMPORAL_ADDRESS = temporal.address;
  }

  const orm = await connectOrm(process.env.DATABASE_URL, 2);
  await migrate(orm);
  await orm.close();
  // MikroORM keeps entity metadata on globalThis; Jest hands this global's properties to the test sandboxes,
  // where Maps made in this realm fail MikroORM's `instanceof Map` checks. Each test file discovers its own.
  delete (globalThis as Record<string, unknown>)['mikro-orm-metadata'];

  const { code } = await bundleWorkflows(false);
  const bundlePath = path.join(dir, 'workflow-bundle.js');
  writeFileSync(bundlePath, code);
  process.env.WORKFLOW_BUNDLE_PATH = bundlePath;
  process.env.TEST_DATA_DIR = dir;
  try {
    // Once here rather than in parallel test files; test/workflows provision again and report what failed.
    provisionTemporalTestServer();
  } catch {
    // Only the workflow tests need it.
  }

  (globalThis as { __stopTestServices?: () => Promise<void> }).__stopTestServices = async () => {
    for (const stop of stops.reverse()) await stop();
  };
}
