import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../paths';

/** The dev server the SDK should run: a binary we found or built, else the SDK's own cached download. */
export type TemporalExecutable = { type: 'existing-path'; path: string } | { type: 'cached-download' };

/** Whether `file` exists and may be run. */
export function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && executable(path.join(dir, name))) return path.join(dir, name);
  }
  return null;
}

/** Where `go install` puts binaries: GOBIN, else the first GOPATH's bin, else ~/go/bin. */
export function goBinDir(): string {
  try {
    const gobin = execFileSync('go', ['env', 'GOBIN'], { encoding: 'utf8' }).trim();
    if (gobin) return gobin;
    return path.join(execFileSync('go', ['env', 'GOPATH'], { encoding: 'utf8' }).trim().split(path.delimiter)[0]!, 'bin');
  } catch {
    return path.join(os.homedir(), 'go', 'bin');
  }
}

/**
 * Finds the Temporal CLI: TEMPORAL_CLI_PATH, then PATH, then Go's bin folder, where
 * scripts/install-temporal-cli.sh builds it (needs Go >= 1.25; the script returns at once when its build is
 * there, and replaces a binary of another build, such as a plain `go install` of v1.5.1). When Go is missing,
 * a binary already in Go's bin folder is taken as it is; with none, the SDK downloads the CLI (needs internet
 * access to temporal.download).
 */
export function resolveTemporalExecutable(log: (message: string) => void = console.log): TemporalExecutable {
  const configured = process.env.TEMPORAL_CLI_PATH;
  if (configured) {
    if (!executable(configured)) throw new Error(`TEMPORAL_CLI_PATH=${configured} is not an executable file`);
    return { type: 'existing-path', path: configured };
  }
  const found = onPath('temporal');
  if (found) return { type: 'existing-path', path: found };

  const built = path.join(goBinDir(), 'temporal');
  if (!executable(built)) log('Temporal CLI not found; building it with Go (first time only, takes a few minutes)…');
  const build = spawnSync('bash', [path.join(PROJECT_ROOT, 'scripts', 'install-temporal-cli.sh')], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (executable(built)) {
    if (build.status !== 0) log(`Could not check the Temporal CLI's build with Go; using ${built} as it is.`);
    return { type: 'existing-path', path: built };
  }
  log('Could not build the Temporal CLI with Go; letting the Temporal SDK download it instead.');
  return { type: 'cached-download' };
}

export const TEMPORAL_CLI_MISSING_HELP =
  'Could not start the Temporal dev server. Install the Temporal CLI (https://docs.temporal.io/cli, or ' +
  '`npm run temporal:install` with Go >= 1.25) and put it on PATH or set ' +
  'TEMPORAL_CLI_PATH, or point TEMPORAL_ADDRESS at a running Temporal server.';
