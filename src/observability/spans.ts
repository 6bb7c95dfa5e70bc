import { type Span, type SpanOptions, SpanStatusCode, trace } from '@opentelemetry/api';

/** The instrumentation scope of the service's own spans. */
const TRACER_NAME = 'construction-integration';

/**
 * Runs `work` in a span of its own, the active span meanwhile, ended when the work settles. A failure marks the span
 * an error, named by the error's class only: messages may quote request data. A no-op span while tracing is off.
 */
export function inSpan<T>(name: string, options: SpanOptions, work: (span: Span) => Promise<T>): Promise<T> {
  // The tracer is asked for each time: one taken once would keep the provider of the tracing that ran then.
  return trace.getTracer(TRACER_NAME).startActiveSpan(name, options, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.setAttribute('error.type', error instanceof Error ? error.constructor.name : typeof error);
      throw error;
    } finally {
      span.end();
    }
  });
}
