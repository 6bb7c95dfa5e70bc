import { rmSync } from 'node:fs';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __stopTestServices?: () => Promise<void> }).__stopTestServices?.();
  if (process.env.TEST_DATA_DIR) rmSync(process.env.TEST_DATA_DIR, { recursive: true, force: true });
}
