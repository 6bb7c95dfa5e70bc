import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import type { Client } from 'pg';

// Transaction control as knex sends it (`BEGIN;`, `COMMIT;`, `ROLLBACK`, savepoints of nested transactions).
const TRANSACTION_CONTROL = /^(?:BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE SAVEPOINT)\b/;

/**
 * Leaves `connection`'s transaction control statements out of traces: they say nothing of what a request did, and
 * each statement's span cost the api tens of µs of CPU (a traced api kept 0.79 of an untraced one's inbound create
 * throughput with their spans, 0.89 without, side by side; docs/benchmarks.md, phase 10). Their time stays in the
 * parent span. The pg instrumentation traces only statements sent under a span (`requireParentSpan`), so these are
 * sent from the root context; while tracing is off `context.with` only calls `send`. Installed on each connection as
 * the pool opens it; the prototype's `query` (which the instrumentation wraps while tracing runs) is looked up at
 * each call, so tracing started or stopped later is followed.
 */
export function untraceTransactionControl(connection: Client): void {
  const send = (self: Client, args: unknown[]): unknown => (Object.getPrototypeOf(self) as { query: (...a: unknown[]) => unknown }).query.apply(self, args);
  Object.defineProperty(connection, 'query', {
    configurable: true,
    writable: true,
    value: function query(this: Client, ...args: unknown[]): unknown {
      const first = args[0];
      const text = typeof first === 'string' ? first : (first as { text?: unknown } | undefined)?.text;
      return typeof text === 'string' && TRANSACTION_CONTROL.test(text) ? context.with(ROOT_CONTEXT, () => send(this, args)) : send(this, args);
    },
  });
}
