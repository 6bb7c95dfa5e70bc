import { spawnSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/**
 * The OpenTelemetry packages a fresh Node process has loaded after requiring the api, the worker and the dispatcher
 * (and, with `start`, after starting tracing): tracing off must cost nothing, so nothing of the SDK may be loaded.
 */
function otelPackagesLoaded(start: boolean): string[] {
  const script = `
    (async () => {
      ${start ? "const tracing = await require('./src/observability/tracing.ts').startTracing({ protocol: 'http/protobuf', serviceName: 'load-check', url: 'http://127.0.0.1:9/v1/traces' });" : ''}
      require('./src/api/server.ts');
      require('./src/worker/worker.ts');
      require('./src/delivery/outbox/dispatcher.ts');
      const packages = Object.keys(require.cache)
        .map((file) => file.split('/node_modules/').pop())
        .filter((name) => name.startsWith('@opentelemetry/') || name.startsWith('@temporalio/interceptors-opentelemetry/'))
        .map((name) => name.split('/').slice(0, 2).join('/'));
      console.log(JSON.stringify([...new Set(packages)].sort()));
      ${start ? 'await tracing.stop();' : ''}
    })();`;
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_')));
  const child = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: ROOT, env, encoding: 'utf8', timeout: 60_000 });
  expect(child.stderr).toBe('');
  return JSON.parse(child.stdout.trim().split('\n').pop()!) as string[];
}

describe('tracing off', () => {
  test('the api, the worker and the dispatcher load @opentelemetry/api alone, whose calls are no-ops', () => {
    expect(otelPackagesLoaded(false)).toEqual(['@opentelemetry/api']);
  });

  test('started, tracing loads the SDK and its exporter (what the check above would find)', () => {
    expect(otelPackagesLoaded(true)).toEqual(expect.arrayContaining(['@opentelemetry/api', '@opentelemetry/sdk-node', '@opentelemetry/exporter-trace-otlp-proto']));
  });
});
