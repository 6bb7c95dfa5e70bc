import { context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { Client } from 'pg';
import { statementWithoutLiterals } from './redaction';

// Transaction control as knex sends it (`BEGIN;`, `COMMIT;`, `ROLLBACK`, savepoints of nested transactions).
const TRANSACTION_CONTROL = /^\s*(?:BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE SAVEPOINT)\b/i;
const VERB = /^\s*([a-z]+)/i;

/**
 * On a query's config object: no span for the statement. For the bookkeeping every request does (its admission),
 * which, like transaction control, says nothing of what the request did; its time stays in the parent span.
 */
export const UNTRACED = Symbol('untraced statement');

type QueryCallback = (error: Error | null, result: unknown) => void;
type Query = (this: Client, ...args: unknown[]) => unknown;

/**
 * A span for each statement sent under a recorded span (a request's, an activity's), as a child of it: `pg.query:VERB
 * database`, with the statement without its values and the server it went to. Statements outside a trace (the
 * dispatcher's polling, LISTEN), transaction control (`BEGIN`, `COMMIT`: they say nothing of what a request did) and
 * statements marked UNTRACED get none. Made here through the OpenTelemetry API rather than by
 * @opentelemetry/instrumentation-pg, whose hooks on every statement cost the api more than the spans
 * (docs/benchmarks.md, phase 10). A failed statement's span says its SQLSTATE (`error.type`), not its message, which
 * can quote the values (`Key (name)=(…) already exists`).
 *
 * Patches `pg.Client.prototype.query`, as knex and the service's own statements call it; returns what takes it off.
 */
export function traceStatements(): () => void {
  const prototype = Client.prototype as unknown as { query: Query };
  const original = prototype.query;
  const traced: Query = function query(this: Client, ...args: unknown[]): unknown {
    const parent = trace.getSpan(context.active());
    if (!parent?.isRecording()) return original.apply(this, args);
    const first = args[0];
    const text = typeof first === 'string' ? first : (first as { text?: unknown } | null | undefined)?.text;
    // Submittables (cursors, streams) report through events of their own; the service sends none under a span.
    if (typeof text !== 'string' || TRANSACTION_CONTROL.test(text) || typeof (first as { submit?: unknown }).submit === 'function' || (first as { [UNTRACED]?: boolean })[UNTRACED]) {
      return original.apply(this, args);
    }
    const span = startStatementSpan(this, text);
    const last = args.length - 1;
    const callback = args[last];
    // knex's form: the result comes to a callback.
    if (typeof callback === 'function') {
      args[last] = endingWith(span, callback as QueryCallback);
      return original.apply(this, args);
    }
    const configCallback = (first as { callback?: unknown }).callback;
    if (typeof configCallback === 'function') {
      args[0] = { ...(first as object), callback: endingWith(span, configCallback as QueryCallback) };
      return original.apply(this, args);
    }
    let result: unknown;
    try {
      result = original.apply(this, args);
    } catch (error) {
      endStatementSpan(span, error as Error);
      throw error;
    }
    return (result as Promise<unknown>).then(
      (value) => {
        endStatementSpan(span, null);
        return value;
      },
      (error: Error) => {
        endStatementSpan(span, error);
        throw error;
      },
    );
  };
  prototype.query = traced;
  return () => {
    if (prototype.query === traced) prototype.query = original;
  };
}

function startStatementSpan(client: Client, text: string): Span {
  const verb = VERB.exec(text)?.[1]?.toUpperCase() ?? 'QUERY';
  // The tracer of the provider running now (a map lookup): tracing may have been restarted since.
  return trace.getTracer('construction-integration-pg').startSpan(`pg.query:${verb} ${client.database ?? ''}`.trimEnd(), {
    kind: SpanKind.CLIENT,
    attributes: {
      'db.system': 'postgresql',
      'db.name': client.database,
      'db.user': client.user,
      'db.statement': statementWithoutLiterals(text),
      'net.peer.name': client.host,
      'net.peer.port': client.port,
    },
  });
}

function endingWith(span: Span, callback: QueryCallback): QueryCallback {
  return function statementDone(this: unknown, error: Error | null, result: unknown) {
    endStatementSpan(span, error);
    return callback.call(this, error, result);
  };
}

function endStatementSpan(span: Span, error: Error | null): void {
  if (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string') span.setAttribute('error.type', code);
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}
