import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { PROJECT_ROOT } from '../src/paths';
import { procStat, rssMb } from './proc';

export interface StartedService {
  /** Seconds from `npm start` to GET /health answering 200. */
  seconds: number;
  /**
   * The highest RSS of the service's one process (API, worker and dispatcher) since start, in MB: the largest Node
   * process of the group (npm and tsx's launcher are small), sampled every 200 ms.
   */
  peakRssMb(): number;
  stop(): Promise<void>;
}

/**
 * `npm start` as a user runs it (embedded PostgreSQL and Temporal dev server, data in `dataDir`), timed until
 * it is healthy. It runs in a process group of its own, so stop() ends npm, tsx and the service together.
 */
export async function npmStart(
  dataDir: string,
  ports: { api: number; postgres: number; temporal: number; ui: number },
  env: Record<string, string> = {},
): Promise<StartedService> {
  const started = performance.now();
  // Its output in a file beside its data: read back when it does not start.
  mkdirSync(dataDir, { recursive: true });
  const logFile = path.join(dataDir, 'npm-start.log');
  const log = openSync(logFile, 'a');
  const child: ChildProcess = spawn('npm', ['start'], {
    cwd: PROJECT_ROOT,
    detached: true,
    stdio: ['ignore', log, log],
    env: {
      ...process.env,
      PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}`,
      DATA_DIR: dataDir,
      PORT: String(ports.api),
      HOST: '127.0.0.1',
      EMBEDDED_POSTGRES_PORT: String(ports.postgres),
      TEMPORAL_DEV_PORT: String(ports.temporal),
      TEMPORAL_UI_PORT: String(ports.ui),
      // Any free port: a service already running on this machine holds the default one.
      WORKER_METRICS_PORT: '0',
      LOG_LEVEL: 'warn',
      DATABASE_URL: '',
      TEMPORAL_ADDRESS: '',
      ...env,
    },
  });
  closeSync(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, largestNodeRssMb(child.pid!));
  }, 200);
  void exited.then(() => clearInterval(sampler));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGTERM');
    await exited;
    // npm may leave before the service has stopped its databases: wait for the group to be gone.
    for (let i = 0; i < 300 && groupAlive(child.pid!); i++) await new Promise((resolve) => setTimeout(resolve, 100));
  };
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}:\n${readFileSync(logFile, 'utf8').slice(-3000)}`);
    const healthy = await fetch(`http://127.0.0.1:${ports.api}/health`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (healthy) {
      return {
        seconds: (performance.now() - started) / 1000,
        peakRssMb: () => Math.max(peak, largestNodeRssMb(child.pid!)),
        stop,
      };
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error('npm start did not become healthy within 180 s');
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The RSS in MB of the largest Node process in process group `pgid` (Linux /proc); 0 when there is none. */
function largestNodeRssMb(pgid: number): number {
  let largest = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    if (procStat(Number(entry))?.pgrp !== pgid) continue;
    try {
      if (path.basename(readlinkSync(`/proc/${entry}/exe`)) !== 'node') continue;
      largest = Math.max(largest, rssMb(Number(entry)) ?? 0);
    } catch {
      // Gone meanwhile, or not ours to read (PostgreSQL's, as another user).
    }
  }
  return largest;
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}
