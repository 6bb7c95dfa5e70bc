import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/**
 * A Node process logging through createLogger's stdout (buffered in 4 KB writes), running `body` after the logger is
 * made; resolves with each line it printed and when (ms after the process started), and how it ended.
 */
function runLogging(body: string, onLine?: (line: string, child: ReturnType<typeof spawn>) => void): Promise<{ lines: { at: number; text: string }[]; code: number | null; signal: NodeJS.Signals | null }> {
  const script = `const logger = require('./src/logger.ts').createLogger('info'); ${body}`;
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const started = Date.now();
  const lines: { at: number; text: string }[] = [];
  let rest = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    const parts = (rest + chunk.toString('utf8')).split('\n');
    rest = parts.pop()!;
    for (const text of parts) {
      lines.push({ at: Date.now() - started, text });
      onLine?.(text, child);
    }
  });
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ lines, code, signal })));
}

const messages = (lines: { text: string }[]) => lines.map((line) => (JSON.parse(line.text) as { msg: string }).msg);

describe('the stdout logger', () => {
  test('writes a line that fills no buffer within about a second, while the process keeps running', async () => {
    // Logs once, then stays alive for 4 s: the line must not wait for the exit.
    const { lines } = await runLogging(`logger.info('first'); setTimeout(() => logger.info('last'), 4000);`);
    expect(messages(lines)).toEqual(['first', 'last']);
    expect(lines[0]!.at).toBeLessThan(3500);
  }, 30_000);

  test('loses nothing buffered when the process is stopped with SIGTERM and exits', async () => {
    const body = `
      process.on('SIGTERM', () => { logger.info('stopping'); process.exit(0); });
      for (let i = 0; i < 30; i++) logger.info('line ' + i);
      logger.info('ready');
      setInterval(() => {}, 1000);`;
    let sent = false;
    // The first line out says the handler is in place; the lines after it may still be buffered.
    const { lines, code } = await runLogging(body, (_line, child) => {
      if (!sent) child.kill('SIGTERM');
      sent = true;
    });
    expect(code).toBe(0);
    expect(messages(lines)).toEqual([...Array.from({ length: 30 }, (_, i) => `line ${i}`), 'ready', 'stopping']);
  }, 30_000);
});
