import otlpRoot from '@opentelemetry/otlp-transformer/build/src/generated/root';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as tests read it, whichever OTLP encoding carried it: ids in lowercase hex, attribute values plain. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  /** Start and end, in nanoseconds since the epoch (OTLP's fixed64, as a decimal string). */
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Record<string, unknown>;
  /** OTLP's StatusCode: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  events: { name: string; attributes: Record<string, unknown> }[];
  links: { traceId: string; spanId: string }[];
  /** The service.name of its resource. */
  service: string;
  resourceAttributes: Record<string, unknown>;
}

/** An OTLP/HTTP traces receiver on 127.0.0.1: what a collector would get from the service. */
export interface OtlpReceiver {
  /** http://127.0.0.1:<port>/v1/traces */
  url: string;
  spans: ReceivedSpan[];
  /** The Content-Type of every export received. */
  contentTypes: string[];
  close(): Promise<void>;
}

/** OTLP's AnyValue, as the protobuf message (after toObject) and the JSON encoding both have it. */
interface AnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
  bytesValue?: string;
  arrayValue?: { values?: AnyValue[] };
  kvlistValue?: { values?: KeyValue[] };
}
interface KeyValue {
  key: string;
  value?: AnyValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  startTimeUnixNano?: string;
  endTimeUnixNano?: string;
  attributes?: KeyValue[];
  status?: { code?: number };
  events?: { name: string; attributes?: KeyValue[] }[];
  links?: { traceId: string; spanId: string }[];
}
interface ExportRequest {
  resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

function plain(value: AnyValue | undefined): unknown {
  if (!value) return null;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(plain);
  if (value.kvlistValue) return attributesOf(value.kvlistValue.values);
  return value.stringValue ?? value.boolValue ?? value.intValue ?? value.doubleValue ?? value.bytesValue ?? null;
}

const attributesOf = (pairs: KeyValue[] = []): Record<string, unknown> => Object.fromEntries(pairs.map(({ key, value }) => [key, plain(value)]));

function spansOf(request: ExportRequest, hexId: (id: string) => string): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
    const resourceAttributes = attributesOf(resourceSpans.resource?.attributes);
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        traceId: hexId(span.traceId),
        spanId: hexId(span.spanId),
        parentSpanId: span.parentSpanId ? hexId(span.parentSpanId) : '',
        name: span.name,
        kind: span.kind ?? 0,
        startTimeUnixNano: String(span.startTimeUnixNano ?? '0'),
        endTimeUnixNano: String(span.endTimeUnixNano ?? '0'),
        attributes: attributesOf(span.attributes),
        statusCode: span.status?.code ?? 0,
        events: (span.events ?? []).map((event) => ({ name: event.name, attributes: attributesOf(event.attributes) })),
        links: (span.links ?? []).map((link) => ({ traceId: hexId(link.traceId), spanId: hexId(link.spanId) })),
        service: String(resourceAttributes['service.name']),
        resourceAttributes,
      })),
    );
  });
}

/** What this test uses of a message type in the exporters' generated OTLP code (typed there as a bare protobufjs Root). */
interface MessageType {
  decode(bytes: Uint8Array): object;
  toObject(message: object, options: { longs: typeof String; bytes: typeof String }): unknown;
}
const { ExportTraceServiceRequest } = (otlpRoot as unknown as { opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: MessageType } } } } } }).opentelemetry.proto
  .collector.trace.v1;

/**
 * Decodes an export with the OTLP definitions the exporters ship (@opentelemetry/otlp-transformer): protobuf, whose
 * ids are bytes (base64 here), or JSON, whose ids are hex.
 */
export function decodeExport(contentType: string, body: Buffer): ReceivedSpan[] {
  if (contentType.startsWith('application/x-protobuf')) {
    const message = ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(body), { longs: String, bytes: String });
    return spansOf(message as ExportRequest, (id) => Buffer.from(id, 'base64').toString('hex'));
  }
  if (contentType.startsWith('application/json')) return spansOf(JSON.parse(body.toString('utf8')) as ExportRequest, (id) => id.toLowerCase());
  throw new Error(`An OTLP export of an unknown Content-Type: ${contentType}`);
}

/** Starts a receiver of OTLP/HTTP trace exports (POST /v1/traces, protobuf or JSON) on a free port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const contentType = request.headers['content-type'] ?? '';
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      contentTypes.push(contentType);
      try {
        spans.push(...decodeExport(contentType, Buffer.concat(chunks)));
      } catch (error) {
        response.writeHead(400, { 'Content-Type': 'text/plain' }).end(String(error));
        return;
      }
      // An empty ExportTraceServiceResponse: everything was accepted.
      if (contentType.startsWith('application/json')) response.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      else response.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    contentTypes,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // The exporter keeps its connection alive.
        server.closeAllConnections();
      }),
  };
}
