import { type Context, context, createTraceState, isSpanContextValid, type Link, ROOT_CONTEXT, type SpanContext, trace } from '@opentelemetry/api';

/**
 * A place in a trace as W3C Trace Context headers: stored with an outbox event and its deliveries, so the work that
 * follows a change (fan-out, the delivery's run, its attempts) continues the change's trace, and sent to subscribers.
 * Always W3C, whatever OTEL_PROPAGATORS says: it is what the columns and the subscribers' headers hold.
 *
 * Written and read with the API alone rather than @opentelemetry/core's W3C propagator: this runs while tracing is
 * off too, when loading core (some 7 MB) would be the only cost of having tracing at all.
 */
export interface TraceContext {
  traceparent: string;
  tracestate: string | null;
}

/** `traceparent` of version 00: trace id, parent span id, flags (W3C Trace Context, section 3.2). */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The active span's `traceparent` (and `tracestate`, when it has one) headers; none without a span (tracing off). */
export function traceHeaders(): Record<string, string> {
  const spanContext = trace.getSpanContext(context.active());
  if (!spanContext || !isSpanContextValid(spanContext)) return {};
  const traceparent = `00-${spanContext.traceId}-${spanContext.spanId}-${spanContext.traceFlags.toString(16).padStart(2, '0')}`;
  const tracestate = spanContext.traceState?.serialize();
  return tracestate ? { traceparent, tracestate } : { traceparent };
}

/** The active span's trace context; null without a span (tracing off). */
export function traceContextOf(): TraceContext | null {
  const headers = traceHeaders();
  return headers.traceparent ? { traceparent: headers.traceparent, tracestate: headers.tracestate ?? null } : null;
}

/** The stored span, as a remote parent; null for a malformed one. */
function spanContextOf(stored: TraceContext): SpanContext | null {
  const [, traceId, spanId, flags] = TRACEPARENT.exec(stored.traceparent) ?? [];
  if (!traceId || !spanId || !flags) return null;
  const spanContext: SpanContext = {
    traceId,
    spanId,
    traceFlags: parseInt(flags, 16),
    isRemote: true,
    ...(stored.tracestate ? { traceState: createTraceState(stored.tracestate) } : {}),
  };
  return isSpanContextValid(spanContext) ? spanContext : null;
}

/** A context whose span is the stored one: spans started in it continue that trace. */
export function contextOf(stored: TraceContext): Context {
  const spanContext = spanContextOf(stored);
  return spanContext ? trace.setSpanContext(ROOT_CONTEXT, spanContext) : ROOT_CONTEXT;
}

/** Links to the stored span, for work that follows from it in a trace of its own (a re-run asked for by hand). */
export function linksTo(stored: TraceContext | null): Link[] {
  const spanContext = stored && spanContextOf(stored);
  return spanContext ? [{ context: spanContext }] : [];
}

/** The trace id of a stored trace context; null for none or a malformed one. */
export function traceIdOf(stored: TraceContext | null): string | null {
  return (stored && spanContextOf(stored)?.traceId) ?? null;
}

/** The trace id of the active span; null without one (tracing off). */
export function currentTraceId(): string | null {
  const spanContext = trace.getSpanContext(context.active());
  return spanContext && isSpanContextValid(spanContext) ? spanContext.traceId : null;
}
