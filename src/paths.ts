import { existsSync } from 'node:fs';
import path from 'node:path';

/** The folder holding package.json, whether we run from src/ (tsx, jest) or from dist/src/ (production). */
function findProjectRoot(start: string): string {
  let dir = start;
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`package.json not found above ${start}`);
    dir = parent;
  }
  return dir;
}

export const PROJECT_ROOT = findProjectRoot(__dirname);
export const SCHEMAS_DIR = path.join(PROJECT_ROOT, 'schemas');
