import { context, propagation, trace } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { traceStatements } from './statement-spans';

/**
 * OpenTelemetry tracing, configured by the standard OTEL_* variables (README, "Tracing"). It is off unless
 * OTEL_TRACES_EXPORTER is `otlp`; then nothing of the SDK is loaded, and the API calls in the service's code are
 * no-ops. The request's span is made by the api's middleware (src/api/middleware/request-span.ts), the statements'
 * by src/observability/statement-spans.ts, not by instrumentations (docs/decisions.md, "OpenTelemetry JS 1.x").
 */

export type OtlpProtocol = 'http/protobuf' | 'http/json';
const PROTOCOLS: readonly string[] = ['http/protobuf', 'http/json'] satisfies OtlpProtocol[];

/** The OTEL_* variables read here (README, "Tracing"); the SDK and its exporter read the others. */
export const TRACING_VARIABLES = ['OTEL_TRACES_EXPORTER', 'OTEL_SDK_DISABLED', 'OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'] as const;

export interface TracingSettings {
  protocol: OtlpProtocol;
  /** service.name, unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES name it. */
  serviceName: string;
  /**
   * The OTLP traces URL. Absent: the exporter's own, from OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
   * OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces (default http://localhost:4318/v1/traces).
   */
  url?: string;
}

/** The settings in the environment; null when tracing is off. Throws on values it cannot honour. */
export function tracingSettingsFromEnv(serviceName: string, env: NodeJS.ProcessEnv = process.env): TracingSettings | null {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return null;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  // The SDK's default would be otlp: here no exporter means no tracing, so a service without a collector pays nothing.
  if (exporters.length === 0 || exporters.includes('none')) return null;
  if (exporters.some((name) => name !== 'otlp')) throw new Error(`OTEL_TRACES_EXPORTER must be otlp or none, got "${env.OTEL_TRACES_EXPORTER}"`);
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf').trim();
  if (!PROTOCOLS.includes(protocol)) {
    throw new Error(`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL / OTEL_EXPORTER_OTLP_PROTOCOL must be ${PROTOCOLS.join(' or ')} (OTLP over HTTP), got "${protocol}"`);
  }
  return { protocol: protocol as OtlpProtocol, serviceName };
}

export interface RunningTracing {
  /** Where every span ends: the SDK's tracer provider's, and the worker's sink of workflow spans. */
  spanProcessor: SpanProcessor;
  /** What made the spans: service, host and process. */
  resource: Resource;
  /** Exports the spans ended so far. */
  flush(): Promise<void>;
  /** Exports what is left, takes the statements' patch off and turns the API back into no-ops. */
  stop(): Promise<void>;
}

let running: RunningTracing | null = null;

/** The tracing this process runs; null while it is off. */
export function activeTracing(): RunningTracing | null {
  return running;
}

/**
 * Starts the SDK: an OTLP exporter behind a batch processor, spans for statements, and the sampler and
 * propagators the OTEL_* variables name (parent-based always-on, W3C trace context and baggage by default).
 */
export async function startTracing(settings: TracingSettings): Promise<RunningTracing> {
  if (running) throw new Error('Tracing is running already');
  const [{ NodeSDK }, { BatchSpanProcessor }, { Resource, detectResourcesSync, envDetectorSync, hostDetectorSync, processDetectorSync }, { OTLPTraceExporter }] =
    await Promise.all([
      import('@opentelemetry/sdk-node'),
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/resources'),
      settings.protocol === 'http/json' ? import('@opentelemetry/exporter-trace-otlp-http') : import('@opentelemetry/exporter-trace-otlp-proto'),
    ]);
  // Made here rather than by the SDK: the workflow spans, exported through the worker's sink, carry the same one.
  const resource = Resource.default()
    .merge(new Resource({ 'service.name': settings.serviceName }))
    .merge(detectResourcesSync({ detectors: [envDetectorSync, hostDetectorSync, processDetectorSync] }));
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter(settings.url ? { url: settings.url } : {}));
  const sdk = new NodeSDK({
    resource,
    autoDetectResources: false,
    mergeResourceWithDefaults: false,
    spanProcessors: [spanProcessor],
    instrumentations: [],
    // Traces only: the logs stay JSON on stdout (with trace ids), the metrics Prometheus'.
    logRecordProcessors: [],
  });
  sdk.start();
  const untraceStatements = traceStatements();
  const started: RunningTracing = {
    spanProcessor,
    resource,
    flush: () => spanProcessor.forceFlush(),
    async stop() {
      running = null;
      await sdk.shutdown();
      untraceStatements();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
  running = started;
  return started;
}

/** Starts tracing as the environment says; null when it is off. */
export async function startTracingFromEnv(serviceName: string): Promise<RunningTracing | null> {
  const settings = tracingSettingsFromEnv(serviceName);
  return settings ? startTracing(settings) : null;
}
