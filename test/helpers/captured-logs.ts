import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/logger';

/** A logger whose JSON lines are kept in `lines`, as they would be written, for a test to read. */
export function capturedLogger(level: string): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { logger: createLogger(level, destination), lines };
}
