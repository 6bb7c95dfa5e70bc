import { spawn } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/paths';

/**
 * A child process that watches its event loop (stuck after 400 ms, looked at every 50 ms), then either blocks its
 * event loop for `blockMs` or keeps it turning for that long, then exits 0.
 */
async function childThat(behaviour: 'blocks' | 'turns', blockMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; ms: number }> {
  const script = `
    const { watchEventLoop } = require(${JSON.stringify(path.join(PROJECT_ROOT, 'src/worker/event-loop-watch.ts'))});
    const stop = watchEventLoop({ stuckAfterMs: 400, checkEveryMs: 50 });
    setTimeout(async () => {
      const until = Date.now() + ${blockMs};
      if (${JSON.stringify(behaviour)} === 'blocks') while (Date.now() < until);
      else await new Promise((resolve) => setTimeout(resolve, ${blockMs}));
      await stop();
      process.exit(0);
    }, 200);
  `;
  const started = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], { cwd: PROJECT_ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (c, s) => resolve([c, s])));
  return { code, signal, stderr, ms: Date.now() - started };
}

describe('the event loop watch (the stand-in for the SDK per-call deadlock detection)', () => {
  it('kills a process whose event loop stopped turning, saying why on stderr', async () => {
    const child = await childThat('blocks', 20_000);
    expect(child.signal).toBe('SIGKILL');
    expect(child.ms).toBeLessThan(15_000);
    const [line] = child.stderr.split('\n').filter((l) => l.includes('event loop'));
    expect(JSON.parse(line!)).toMatchObject({ level: 60, msg: expect.stringMatching(/^the event loop has not turned for \d+ ms/) });
  }, 30_000);

  it('leaves a process whose event loop turns alone, however long it runs', async () => {
    const child = await childThat('turns', 1_500);
    expect({ code: child.code, signal: child.signal }).toEqual({ code: 0, signal: null });
    expect(child.stderr).not.toContain('event loop');
  }, 30_000);
});
