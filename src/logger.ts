import { context, isSpanContextValid, trace } from '@opentelemetry/api';
import pino from 'pino';

export type Logger = pino.Logger;

/** The active span's trace and span ids, so a log line leads to its trace; nothing while tracing is off. */
function traceIds(): { trace_id?: string; span_id?: string } {
  const spanContext = trace.getSpanContext(context.active());
  return spanContext && isSpanContextValid(spanContext) ? { trace_id: spanContext.traceId, span_id: spanContext.spanId } : {};
}

/** Stdout is written once this much is buffered, and at least this often. */
const STDOUT_BUFFER_BYTES = 4096;
const STDOUT_FLUSH_MS = 1000;

/**
 * JSON lines to `destination`, or to stdout in writes of 4 KB: a write per line (the access log's one per request)
 * was 4 % of a GET's CPU (docs/benchmarks.md). What is buffered goes out within a second, and when the process
 * exits (SIGTERM's shutdown too); the writes stay synchronous, so none is in flight at exit. A SIGKILL loses at
 * most the last second's lines.
 */
export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info', destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service: 'construction-integration' },
    mixin: traceIds,
    redact: { paths: ['req.headers["x-api-key"]', 'apiKey', 'secret'], censor: '[redacted]' },
  };
  if (destination) return pino(options, destination);
  return level === 'silent' ? pino(options) : pino(options, bufferedStdout());
}

let stdout: ReturnType<typeof pino.destination> | null = null;

/** One buffered stdout for every logger of the process. */
function bufferedStdout(): ReturnType<typeof pino.destination> {
  if (stdout) return stdout;
  const destination = pino.destination({ dest: 1, minLength: STDOUT_BUFFER_BYTES, sync: true });
  setInterval(() => destination.flush(), STDOUT_FLUSH_MS).unref();
  // pino flushes at exit only the destinations it writes asynchronously.
  process.on('exit', () => destination.flushSync());
  stdout = destination;
  return destination;
}
