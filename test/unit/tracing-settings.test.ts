import { statementWithoutLiterals } from '../../src/observability/redaction';
import { contextOf, linksTo, traceIdOf } from '../../src/observability/trace-context';
import { tracingSettingsFromEnv } from '../../src/observability/tracing';
import { trace } from '@opentelemetry/api';

describe('tracing settings from OTEL_* variables', () => {
  const settings = (env: Record<string, string>) => tracingSettingsFromEnv('the-service', env);

  it('is off without an exporter, with none, or with the SDK disabled', () => {
    expect(settings({})).toBeNull();
    expect(settings({ OTEL_TRACES_EXPORTER: '' })).toBeNull();
    expect(settings({ OTEL_TRACES_EXPORTER: 'none' })).toBeNull();
    expect(settings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' })).toBeNull();
    // An endpoint alone does not turn it on: OTEL_TRACES_EXPORTER does.
    expect(settings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBeNull();
  });

  it('exports OTLP over HTTP, protobuf unless JSON is asked for, traces-only setting first', () => {
    expect(settings({ OTEL_TRACES_EXPORTER: 'otlp' })).toEqual({ protocol: 'http/protobuf', serviceName: 'the-service' });
    expect(settings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })?.protocol).toBe('http/json');
    expect(settings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' })?.protocol).toBe('http/protobuf');
  });

  it('refuses what it cannot honour rather than tracing nowhere', () => {
    expect(() => settings({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(/OTEL_TRACES_EXPORTER must be otlp or none/);
    expect(() => settings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/http\/protobuf or http\/json/);
  });
});

describe('what spans may say', () => {
  it('keeps the shape of a statement without the values MikroORM inlines in it', () => {
    expect(statementWithoutLiterals(`insert into "customers" ("id", "name", "rank") values ('0199a5c2-7e0a-7000-8000-000000000001', 'O''Brien & Sons', 42)`)).toBe(
      `insert into "customers" ("id", "name", "rank") values (?, ?, ?)`,
    );
    expect(statementWithoutLiterals(`select "e0".* from "employees" as "e0" where "e0"."salary" > 1.5e3 and "e0"."note" = E'a\\'b' limit 10`)).toBe(
      `select "e0".* from "employees" as "e0" where "e0"."salary" > ? and "e0"."note" = ? limit ?`,
    );
    expect(statementWithoutLiterals(`update "outbox_events" set "data" = '{"email":"dana@example.com"}'`)).toBe(`update "outbox_events" set "data" = ?`);
    // Bind parameters stay as they are: their numbers are positions, not values.
    expect(statementWithoutLiterals(`select * from "projects" where "company_id" = $1 and "rank" > 7 limit $2`)).toBe(`select * from "projects" where "company_id" = $1 and "rank" > ? limit $2`);
  });
});

describe('stored trace context', () => {
  const stored = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'vendor=value' };

  it('names its trace, and continues it or links to it', () => {
    expect(traceIdOf(stored)).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(trace.getSpanContext(contextOf(stored))).toMatchObject({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', isRemote: true });
    expect(trace.getSpanContext(contextOf(stored))?.traceState?.get('vendor')).toBe('value');
    expect(linksTo(stored)).toEqual([{ context: expect.objectContaining({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' }) }]);
  });

  it('is nothing when there is none or it is malformed', () => {
    expect(traceIdOf(null)).toBeNull();
    expect(traceIdOf({ traceparent: 'not a traceparent', tracestate: null })).toBeNull();
    expect(linksTo(null)).toEqual([]);
  });
});
