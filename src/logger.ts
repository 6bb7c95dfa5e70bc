import { context, isSpanContextValid, trace } from '@opentelemetry/api';
import pino from 'pino';

export type Logger = pino.Logger;

/** The active span's trace and span ids, so a log line leads to its trace; nothing while tracing is off. */
function traceIds(): { trace_id?: string; span_id?: string } {
  const spanContext = trace.getSpanContext(context.active());
  return spanContext && isSpanContextValid(spanContext) ? { trace_id: spanContext.traceId, span_id: spanContext.spanId } : {};
}

/** JSON lines to `destination` (stdout by default). */
export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info', destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service: 'construction-integration' },
    mixin: traceIds,
    redact: { paths: ['req.headers["x-api-key"]', 'apiKey', 'secret'], censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}
