import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from './paths';

/**
 * Defaults for running on a laptop with nothing installed: data of the embedded PostgreSQL and Temporal
 * dev server under .data/ (git-ignored), so it survives restarts.
 */
export const LOCAL_DATA_DIR = process.env.DATA_DIR ?? path.join(PROJECT_ROOT, '.data');
export const LOCAL_DATABASE = 'construction';
export const LOCAL_POSTGRES_PORT = Number(process.env.EMBEDDED_POSTGRES_PORT ?? 55432);
export const LOCAL_TEMPORAL_PORT = Number(process.env.TEMPORAL_DEV_PORT ?? 7233);
export const LOCAL_TEMPORAL_UI_PORT = Number(process.env.TEMPORAL_UI_PORT ?? 8233);

/** The encryption key of this data folder, made on first use; losing it makes stored secrets unreadable. */
export function localEncryptionKey(dataDir: string = LOCAL_DATA_DIR): string {
  const file = path.join(dataDir, 'encryption.key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32).toString('hex');
  writeFileSync(file, key, { mode: 0o600 });
  return key;
}
