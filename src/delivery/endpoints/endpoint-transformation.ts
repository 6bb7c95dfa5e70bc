import jsonata from 'jsonata';
import { performance } from 'node:perf_hooks';
import type { TransformationLimits } from '../../config';
import { ApiError } from '../../errors';
import type { EndpointTransformation } from '../../generated/schemas';
import type { WorkerMetrics } from '../../metrics';
import { isReservedHeader } from './endpoint-authentication';
import type { DeliveryKind } from './webhook-endpoint.entity';

/**
 * An endpoint's transformation (docs/transformations.md): JSONata expressions over the body the endpoint would be sent,
 * whose results are the body, headers and path sent instead. checkTransformation refuses, naming the field, what can be
 * known wrong when it is saved; compileTransformation parses it once; `run` evaluates it within its limits, and throws
 * a TransformationError naming the expression at fault when it fails. CompiledTransformations keeps each endpoint's
 * compiled once per endpoint version, as CompiledFilters does its filter.
 */

export type Transformation = NonNullable<EndpointTransformation>;

/** What a transformation made of a delivery's body: what every attempt of the delivery sends. */
export interface TransformedRequest {
  /** The body written out, sent byte for byte and signed. */
  payload: string;
  /** Sent besides the signature's and the authentication's headers, which win. */
  headers: Record<string, string>;
  /**
   * The path and query sent to, in place of the endpoint's (`path`), joined to the endpoint's URL at each attempt
   * (urlWithPath); null: the endpoint's own URL (or a feed's entry).
   */
  path: string | null;
}

/** Why a transformation made nothing to send: the expression at fault, JSONata's message and where in the expression. */
export class TransformationError extends Error {
  constructor(
    readonly field: string,
    readonly reason: string,
    readonly position: number | null,
  ) {
    super(`transformation failed: ${field} ${reason}${position === null ? '' : ` (at position ${position})`}`);
    this.name = 'TransformationError';
  }
}

/** Recursion a transformation may nest to, at most (JSONata's `stack` guard): a runaway recursive function stops here. */
const MAX_DEPTH = 500;
/** The longest header value and path a transformation may make. */
const MAX_HEADER_CHARS = 4096;
const MAX_PATH_CHARS = 2000;
/** Printable ASCII, no surrounding space: what a header value may hold (no CR or LF can split a header). */
const HEADER_VALUE = /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/;
/**
 * A relative path: one leading slash (never two, which would name another host), then printable ASCII without a
 * backslash (which the URL parser reads as a slash) or spaces and tabs (which it drops).
 */
const RELATIVE_PATH = /^\/(?![/\\])[\x21-\x5b\x5d-\x7e]*$/;

interface JsonataFailure {
  code?: string;
  message?: string;
  position?: number;
}

const fieldOfHeader = (name: string) => `transformation.headers.${name}`;

/** Parses one expression, or throws a 400 naming its field with JSONata's message and position. */
function parsed(field: string, expression: string, options?: jsonata.JsonataOptions): jsonata.Expression {
  try {
    return jsonata(expression, options);
  } catch (error) {
    const { message, position } = error as JsonataFailure;
    const reason = `does not parse: ${message ?? String(error)}${position === undefined ? '' : ` (at position ${position})`}`;
    throw ApiError.invalid(field, reason);
  }
}

/**
 * The text a path expression's result begins with, when the expression says: a string literal, or the leftmost one of
 * a concatenation (`"/projects/" & data.project_code`); null when it depends on the event.
 */
function leadingLiteral(node: jsonata.ExprNode): { text: string; whole: boolean } | null {
  if (node.type === 'string') return { text: String(node.value), whole: true };
  if (node.type === 'binary' && node.value === '&' && node.lhs && !Array.isArray(node.lhs)) {
    const left = leadingLiteral(node.lhs);
    return left && { text: left.text, whole: false };
  }
  return null;
}

/** Checks a transformation the schema accepted, for an endpoint of kind `delivery`, throwing a 400 naming its field. */
export function checkTransformation(transformation: Transformation, delivery: DeliveryKind): void {
  if (delivery === 'feed') {
    const extra = transformation.headers !== undefined ? 'headers' : transformation.path !== undefined ? 'path' : null;
    if (extra) throw ApiError.invalid(`transformation.${extra}`, "applies to webhook endpoints only: a feed's entries take a body transformation only");
  }
  parsed('transformation.body', transformation.body);
  const seen = new Set<string>();
  for (const [name, expression] of Object.entries(transformation.headers ?? {})) {
    if (isReservedHeader(name)) throw ApiError.invalid(fieldOfHeader(name), `is reserved: ${name} is set by the service or by HTTP itself`);
    if (seen.has(name.toLowerCase())) throw ApiError.invalid(fieldOfHeader(name), 'is given twice (header names are case-insensitive)');
    seen.add(name.toLowerCase());
    parsed(fieldOfHeader(name), expression);
  }
  if (transformation.path !== undefined) {
    const literal = leadingLiteral(parsed('transformation.path', transformation.path).ast());
    const prefixOk = literal === null || RELATIVE_PATH.test(literal.whole ? literal.text : `${literal.text}x`);
    if (!prefixOk) throw ApiError.invalid('transformation.path', 'must make a relative path: one leading /, no // or \\ at its start, printable ASCII (the host never changes)');
  }
}

/**
 * The URL a delivery goes to with a path made by a transformation: the endpoint's URL (scheme, user, host and port
 * as they are) with that path and query. Whatever the path holds, the origin stays the endpoint's, which the SSRF
 * guard vetted: a path that could be read as another host (//host, \host, a scheme) is refused.
 */
export function urlWithPath(endpointUrl: string, path: string | null): string {
  if (path === null) return endpointUrl;
  if (path.length > MAX_PATH_CHARS || !RELATIVE_PATH.test(path)) {
    throw new TransformationError('transformation.path', `made ${JSON.stringify(path.slice(0, 100))}, not a relative path (one leading /, no // or \\, printable ASCII, ${MAX_PATH_CHARS} characters at most)`, null);
  }
  const target = new URL(endpointUrl);
  const resolved = new URL(path, target.origin);
  if (resolved.origin !== target.origin) throw new TransformationError('transformation.path', 'made a path that names another origin', null);
  target.pathname = resolved.pathname;
  target.search = resolved.search;
  target.hash = '';
  return target.toString();
}

/** A JSONata function or lambda in a result: not JSON, never sent. */
function refuseFunctions(_key: string, value: unknown): unknown {
  if (typeof value === 'function' || (value !== null && typeof value === 'object' && (value as { _jsonata_lambda?: unknown })._jsonata_lambda)) {
    throw new TypeError('a function is not JSON');
  }
  return value;
}

/** A transformation parsed once, evaluated for each delivery within its limits. */
export class CompiledTransformation {
  private readonly body: jsonata.Expression;
  private readonly headers: [string, jsonata.Expression][];
  private readonly path: jsonata.Expression | null;

  constructor(
    transformation: Transformation,
    private readonly limits: TransformationLimits,
  ) {
    const options = { timeout: limits.timeoutMs, stack: MAX_DEPTH };
    this.body = parsed('transformation.body', transformation.body, options);
    this.headers = Object.entries(transformation.headers ?? {}).map(([name, expression]) => [name, parsed(fieldOfHeader(name), expression, options)]);
    this.path = transformation.path === undefined ? null : parsed('transformation.path', transformation.path, options);
  }

  /** What the endpoint is sent for `event` (the body it would be sent untransformed); `endpointUrl` null for a feed. */
  async run(event: unknown, endpointUrl: string | null): Promise<TransformedRequest> {
    const started = performance.now();
    const payload = this.written(await this.evaluate('transformation.body', this.body, event, started));
    const headers: Record<string, string> = {};
    for (const [name, expression] of this.headers) {
      const value = await this.evaluate(fieldOfHeader(name), expression, event, started);
      if (typeof value !== 'string' || value.length > MAX_HEADER_CHARS || !HEADER_VALUE.test(value)) {
        throw new TransformationError(fieldOfHeader(name), `must make a string of printable ASCII up to ${MAX_HEADER_CHARS} characters, not ${describe(value)}`, null);
      }
      headers[name] = value;
    }
    let path: string | null = null;
    if (this.path && endpointUrl !== null) {
      const value = await this.evaluate('transformation.path', this.path, event, started);
      if (typeof value !== 'string') throw new TransformationError('transformation.path', `must make a string, not ${describe(value)}`, null);
      const url = new URL(urlWithPath(endpointUrl, value));
      path = `${url.pathname}${url.search}`;
    }
    return { payload, headers, path };
  }

  /** One expression's value; its failure, a timeout, or no value at all as a TransformationError naming it. */
  private async evaluate(field: string, expression: jsonata.Expression, event: unknown, started: number): Promise<unknown> {
    let value: unknown;
    try {
      value = await expression.evaluate(event);
    } catch (error) {
      const failure = error as JsonataFailure;
      if (failure.code === 'D1012') throw new TransformationError(field, `timed out after ${this.limits.timeoutMs} ms (WEBHOOK_TRANSFORMATION_TIMEOUT_MS)`, null);
      throw new TransformationError(field, failure.message ?? String(error), failure.position ?? null);
    }
    // Each expression has the whole limit; together they have it too.
    if (performance.now() - started > this.limits.timeoutMs) throw new TransformationError(field, `timed out after ${this.limits.timeoutMs} ms (WEBHOOK_TRANSFORMATION_TIMEOUT_MS)`, null);
    if (value === undefined) throw new TransformationError(field, 'returned no value', null);
    return value;
  }

  /** The body's value written out as JSON, within WEBHOOK_TRANSFORMATION_MAX_BYTES. */
  private written(value: unknown): string {
    let payload: string;
    try {
      payload = JSON.stringify(value, refuseFunctions);
    } catch (error) {
      throw new TransformationError('transformation.body', `returned what is not JSON: ${(error as Error).message}`, null);
    }
    const bytes = Buffer.byteLength(payload, 'utf8');
    if (bytes > this.limits.maxBytes) {
      throw new TransformationError('transformation.body', `made ${bytes} bytes, more than WEBHOOK_TRANSFORMATION_MAX_BYTES (${this.limits.maxBytes})`, null);
    }
    return payload;
  }
}

/** A value in an error message: its JSON, cut short. */
function describe(value: unknown): string {
  const text = JSON.stringify(value) ?? typeof value;
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

/** What one evaluation came to, counted and timed (webhook_transformations_total, webhook_transformation_duration_seconds). */
export type TransformationOutcome = { ok: true; request: TransformedRequest } | { ok: false; error: TransformationError };

type TransformationMetrics = Pick<WorkerMetrics, 'transformations' | 'transformationDuration'>;

/**
 * Each endpoint's compiled transformation, compiled again only when the endpoint changed (its updated_at): attempts
 * and the dispatcher's feed entries ask for it for every delivery or entry.
 */
export class CompiledTransformations {
  private readonly byEndpoint = new Map<string, { updatedAt: string; compiled: CompiledTransformation }>();

  /** Endpoints remembered at most: past it, the cache starts afresh (deleted endpoints' transformations go with it). */
  constructor(
    private readonly limits: TransformationLimits,
    private readonly metrics?: TransformationMetrics,
    private readonly capacity = 10_000,
  ) {}

  of(endpointId: string, updatedAt: string, transformation: Transformation): CompiledTransformation {
    const cached = this.byEndpoint.get(endpointId);
    if (cached && cached.updatedAt === updatedAt) return cached.compiled;
    if (this.byEndpoint.size >= this.capacity) this.byEndpoint.clear();
    const compiled = new CompiledTransformation(transformation, this.limits);
    this.byEndpoint.set(endpointId, { updatedAt, compiled });
    return compiled;
  }

  /** Runs the endpoint's transformation on `event`, counting and timing it; a failure is an outcome, not a throw. */
  async run(endpoint: { id: string; updatedAt: string; url: string | null; transformation: Transformation }, event: unknown): Promise<TransformationOutcome> {
    const started = performance.now();
    let outcome: TransformationOutcome;
    try {
      outcome = { ok: true, request: await this.of(endpoint.id, endpoint.updatedAt, endpoint.transformation).run(event, endpoint.url) };
    } catch (error) {
      if (!(error instanceof TransformationError)) throw error;
      outcome = { ok: false, error };
    }
    const label = outcome.ok ? 'succeeded' : 'failed';
    this.metrics?.transformations.inc({ endpoint_id: endpoint.id, outcome: label });
    this.metrics?.transformationDuration.observe({ outcome: label }, (performance.now() - started) / 1000);
    return outcome;
  }
}
