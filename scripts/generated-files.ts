import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../src/paths';

/**
 * The end every generator shares (`npm run generate`): writes each generated file, or with `--check` on the command
 * line only says which are stale (exit code 1), which a test runs. An error exits 1 with its message.
 */
export function writeGenerated(generate: () => Promise<[file: string, contents: string][]> | [file: string, contents: string][]): void {
  const check = process.argv.includes('--check');
  Promise.resolve()
    .then(generate)
    .then((outputs) => {
      for (const [file, contents] of outputs) {
        const name = path.relative(PROJECT_ROOT, file);
        if (!check) {
          writeFileSync(file, contents);
          console.log(`wrote ${name}`);
        } else if (!existsSync(file) || readFileSync(file, 'utf8') !== contents) {
          console.error(`${name} is stale: run npm run generate`);
          process.exitCode = 1;
        }
      }
    })
    .catch((error: unknown) => {
      console.error(error);
      process.exit(1);
    });
}
