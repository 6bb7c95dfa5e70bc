import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import tls from 'node:tls';
import { traceHeaders } from '../../observability/trace-context';
import type { AttemptResult } from './attempt-result';
import { createGuardedLookup, parseWebhookUrl, type TargetPolicy, UnsafeTargetError } from '../endpoints/ssrf-guard';

export interface WebhookRequest {
  url: string;
  /** Sent byte-for-byte (UTF-8) as given. */
  body: string;
  /**
   * The caller's headers (signature etc.); the sender adds Content-Type, Content-Length, a User-Agent, and the active
   * span's W3C traceparent and tracestate (not signed), so the endpoint's own trace can join ours.
   */
  headers: Record<string, string>;
  /** Called every PROGRESS_INTERVAL_MS while the request is in flight, so the activity can heartbeat. */
  onProgress?: () => void;
  /** The attempt's time left, when part of it went before the request (a token fetched); WEBHOOK_TIMEOUT_MS otherwise. */
  timeoutMs?: number;
  /** Presented for mutual TLS. */
  clientCertificate?: ClientCertificate;
}

/** A client certificate an endpoint's attempts present, on keep-alive connections of their own. */
export interface ClientCertificate {
  /** Whose it is (the endpoint): one set of connections each, replaced when `version` changes. */
  owner: string;
  /** Changes with the certificate or key, so a new one takes effect at the next request. */
  version: string;
  /** PEM, its chain may follow. */
  certificate: string;
  /** The private key (PEM), asked for only when new connections are set up for this version. */
  privateKey(): string;
}

/** An OAuth 2.0 token request (RFC 6749 4.4): a form POST through the same SSRF guard as deliveries. */
export interface TokenRequest {
  url: string;
  form: Record<string, string>;
  headers: Record<string, string>;
  timeoutMs: number;
  onProgress?: () => void;
}

export interface TokenResponse {
  /** null when no response arrived. */
  statusCode: number | null;
  /** The response body (up to TOKEN_RESPONSE_BYTES), or null when there was none. */
  body: string | null;
  /** null on a 2xx; otherwise why not, as for deliveries. */
  error: string | null;
}

export interface WebhookSender {
  /** Never throws for network or HTTP problems; they come back as the attempt's result. */
  send(request: WebhookRequest): Promise<AttemptResult>;
  /** Never throws for network or HTTP problems either. */
  requestToken(request: TokenRequest): Promise<TokenResponse>;
  close(): void;
}

export const RESPONSE_EXCERPT_BYTES = 1024;
/** More than any token response needs (a JWT of a few KiB): a longer one is cut here and fails to parse. */
const TOKEN_RESPONSE_BYTES = 64 * 1024;
export const PROGRESS_INTERVAL_MS = 2_000;
const DEFAULT_USER_AGENT = 'construction-integration-service-webhooks/1.0';

type Outcome = Pick<AttemptResult, 'error' | 'failureKind'>;

function responseOutcome(response: IncomingMessage): Outcome {
  const status = response.statusCode!;
  if (status >= 200 && status < 300) return { error: null, failureKind: null };
  if (status >= 300 && status < 400) {
    const location = response.headers.location;
    return { error: location ? `redirect to ${location} not followed` : `HTTP ${status} redirect not followed`, failureKind: 'redirect' };
  }
  return { error: `HTTP ${status}`, failureKind: 'http' };
}

/** Retry-After as webhook receivers send it on 429 and 503: delay-seconds or an HTTP date. */
export function retryAfterMs(response: Pick<IncomingMessage, 'statusCode' | 'headers'>, now = Date.now()): number | null {
  const value = response.headers['retry-after'];
  if ((response.statusCode !== 429 && response.statusCode !== 503) || typeof value !== 'string') return null;
  if (/^\s*\d{1,10}\s*$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

function errorOutcome(error: Error): Outcome {
  if (error instanceof UnsafeTargetError) return { error: error.reason, failureKind: 'blocked' };
  // Happy-eyeballs connects report one AggregateError, with an empty message, for all addresses tried.
  // Checked by shape, not instanceof: Node makes it in its own realm, which differs from ours under jest.
  const inner = (error as Partial<AggregateError>).errors;
  const message = !error.message && Array.isArray(inner) ? inner.map((each: Error) => each.message).join('; ') : error.message;
  // OpenSSL's messages quote its source files; its reason alone says what happened ("tlsv13 alert certificate required").
  const { reason } = error as { reason?: unknown };
  if ((error as NodeJS.ErrnoException).code?.startsWith('ERR_SSL_') && typeof reason === 'string') return { error: `TLS handshake failed: ${reason}`, failureKind: 'connection' };
  return { error: message || ((error as NodeJS.ErrnoException).code ?? error.name), failureKind: 'connection' };
}

/** Connections closed on a request that presented a client certificate: in TLS 1.3 a server refuses one that way. */
const CLOSED_CONNECTION = /^(socket hang up|read ECONNRESET)$/;

export interface WebhookSenderOptions {
  allowLoopback: boolean;
  /** Deadline of the whole attempt, connecting included (WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number;
  /** Deadline of connecting: DNS lookup, TCP connect and TLS handshake (WEBHOOK_CONNECT_TIMEOUT_MS). */
  connectTimeoutMs: number;
  ca?: string | Buffer;
  userAgent?: string;
}

/** One POST's answer: its status, the start of its body, and what went wrong. */
interface Exchange extends Outcome {
  statusCode: number | null;
  durationMs: number;
  body: Buffer | null;
  retryAfterMs: number | null;
  /** Failed on a kept-alive connection the server had closed, before any answer (STALE_CONNECTION_RETRIES). */
  staleConnection?: boolean;
}

/**
 * The agents keep an idle connection until the receiver closes it (Node's servers after 5 s), so it can be picked for
 * the next POST as the close arrives: the POST fails at once with a reset and no answer. Node's documentation
 * (`request.reusedSocket`) has the request made again; it goes on another connection within the attempt's deadline,
 * instead of waiting for the next attempt (60 s later). A receiver that did read it before the reset gets it twice with
 * one X-Webhook-ID, as it would from that next attempt. A few times at most: each retry takes the next kept-alive
 * connection, which may be closed too.
 */
const STALE_CONNECTION_RETRIES = 3;
const isReset = (error: NodeJS.ErrnoException) => error.code === 'ECONNRESET' || error.code === 'EPIPE';

interface Post {
  target: URL;
  body: Buffer;
  headers: Record<string, string>;
  agent: https.Agent;
  timeoutMs: number;
  /** When the attempt began (performance.now()): a POST made again has what is left of timeoutMs. */
  startedAt: number;
  /** Reading stops here: a huge or endless body is never buffered. */
  maxResponseBytes: number;
  onProgress?: () => void;
}

/** The exchange of a POST begun at `started`, as it ends: its duration taken then. */
function exchangeSince(started: number) {
  return (outcome: Outcome, statusCode: number | null = null, body: Buffer | null = null, retryAfter: number | null = null): Exchange => ({
    statusCode,
    durationMs: Math.round(performance.now() - started),
    ...outcome,
    body,
    retryAfterMs: retryAfter,
  });
}

/**
 * Reads up to `maxBytes` of the response's body and gives it to `done` (null when empty), at its end or once that much
 * came; `done` may be called again (an error or close after the end), which the caller ignores.
 */
function readBody(response: IncomingMessage, maxBytes: number, done: (body: Buffer | null) => void): void {
  const chunks: Buffer[] = [];
  let received = 0;
  const end = () => {
    const body = Buffer.concat(chunks).subarray(0, maxBytes);
    done(body.length > 0 ? body : null);
  };
  response.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    received += chunk.length;
    if (received >= maxBytes) {
      end();
      // Enough read: stop reading so a huge or endless body is never buffered.
      response.destroy();
    }
  });
  response.on('end', end);
  // A body cut short still leaves a status to judge by; the deadline may already have settled this.
  response.on('error', end);
  response.on('close', end);
}

/**
 * One POST on `agent`, settled once: by its response (its body read up to `maxResponseBytes`), its error, the attempt's
 * deadline, or the connect deadline of a new connection.
 */
function post(request: Post, connectTimeoutMs: number, userAgent: string): Promise<Exchange> {
  const exchange = exchangeSince(request.startedAt);
  return new Promise<Exchange>((resolve) => {
    let settled = false;
    let statusCode: number | null = null;
    const timers: { deadline?: NodeJS.Timeout; connect?: NodeJS.Timeout; progress?: NodeJS.Timeout } = {};
    const settle = (value: Exchange) => {
      if (settled) return;
      settled = true;
      clearTimeout(timers.deadline);
      clearTimeout(timers.connect);
      clearInterval(timers.progress);
      resolve(value);
    };
    const headers = { 'User-Agent': userAgent, ...request.headers, ...traceHeaders(), 'Content-Length': String(request.body.length) };
    const outgoing = https.request(request.target, { method: 'POST', agent: request.agent, headers }, (response) => {
      statusCode = response.statusCode!;
      readBody(response, request.maxResponseBytes, (body) => settle(exchange(responseOutcome(response), statusCode, body, retryAfterMs(response))));
    });
    timers.deadline = setTimeout(() => {
      settle(exchange({ error: `timed out after ${request.timeoutMs} ms`, failureKind: 'timeout' }, statusCode));
      outgoing.destroy();
    }, Math.max(0, request.startedAt + request.timeoutMs - performance.now()));
    // Connecting has a shorter deadline of its own: a host that never completes the TCP or TLS handshake frees the
    // worker's activity slot after it, not after the whole attempt's. A kept-alive socket is connected already.
    outgoing.once('socket', (socket) => {
      if (outgoing.reusedSocket) return;
      const connectMs = Math.min(connectTimeoutMs, request.timeoutMs);
      timers.connect = setTimeout(() => {
        settle(exchange({ error: `connect timed out after ${connectMs} ms`, failureKind: 'connection' }));
        outgoing.destroy();
      }, connectMs);
      socket.once('secureConnect', () => clearTimeout(timers.connect));
    });
    if (request.onProgress) timers.progress = setInterval(request.onProgress, PROGRESS_INTERVAL_MS);
    outgoing.on('error', (error) => settle({ ...exchange(errorOutcome(error)), staleConnection: outgoing.reusedSocket && statusCode === null && isReset(error) }));
    outgoing.end(request.body);
  });
}

/**
 * The sender the worker uses: HTTPS only, every connection through the SSRF guard's lookup, kept alive per agent (one
 * shared, one per mutual-TLS endpoint).
 */
class HttpsWebhookSender implements WebhookSender {
  private readonly policy: TargetPolicy;
  private readonly userAgent: string;
  private readonly lookup: ReturnType<typeof createGuardedLookup>;
  /** An explicit `ca` replaces the default roots, so the extra one goes with them. */
  private readonly ca: string[] | undefined;
  private readonly agent: https.Agent;
  /** Mutual TLS endpoints' agents, by owner: their connections carry its client certificate. */
  private readonly clientAgents = new Map<string, { version: string; agent: https.Agent }>();

  constructor(private readonly options: WebhookSenderOptions) {
    this.policy = { allowLoopback: options.allowLoopback };
    this.userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
    this.lookup = createGuardedLookup(this.policy);
    this.ca = options.ca !== undefined ? [...tls.rootCertificates, options.ca.toString()] : undefined;
    // The agent's options reach every socket it opens, so each connection goes through the guarded lookup. Its context
    // is made once, as an agent given `ca` would parse the 140-odd roots again for each connection.
    const secureContext = this.ca ? { secureContext: tls.createSecureContext({ ca: this.ca }) } : {};
    this.agent = new https.Agent({ keepAlive: true, lookup: this.lookup, ...secureContext });
  }

  async send(request: WebhookRequest): Promise<AttemptResult> {
    const target = this.targetOf(request.url);
    if (target instanceof UnsafeTargetError) return { statusCode: null, durationMs: 0, error: target.reason, failureKind: 'blocked', responseExcerpt: null, retryAfterMs: null };
    let agent = this.agent;
    if (request.clientCertificate) {
      try {
        agent = this.agentFor(request.clientCertificate);
      } catch (error) {
        // Checked when saved, so only a certificate this Node cannot use gets here; nothing is sent.
        return { statusCode: null, durationMs: 0, error: `the client certificate cannot be used: ${(error as Error).message}`, failureKind: 'authentication', responseExcerpt: null, retryAfterMs: null };
      }
    }
    const { body, ...answer } = await this.post({
      target,
      body: Buffer.from(request.body, 'utf8'),
      headers: { ...request.headers, 'Content-Type': 'application/json' },
      agent,
      timeoutMs: request.timeoutMs ?? this.options.timeoutMs,
      maxResponseBytes: RESPONSE_EXCERPT_BYTES,
      onProgress: request.onProgress,
    });
    const refusedCertificate = request.clientCertificate && answer.statusCode === null && CLOSED_CONNECTION.test(answer.error ?? '');
    return {
      ...answer,
      ...(refusedCertificate ? { error: `${answer.error} after the client certificate was presented: the endpoint may not accept it` } : {}),
      responseExcerpt: body === null ? null : body.toString('utf8'),
    };
  }

  async requestToken(request: TokenRequest): Promise<TokenResponse> {
    const target = this.targetOf(request.url);
    if (target instanceof UnsafeTargetError) return { statusCode: null, body: null, error: `the token URL ${target.reason}` };
    const answer = await this.post({
      target,
      body: Buffer.from(new URLSearchParams(request.form).toString(), 'utf8'),
      headers: { ...request.headers, 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      agent: this.agent,
      timeoutMs: request.timeoutMs,
      maxResponseBytes: TOKEN_RESPONSE_BYTES,
      onProgress: request.onProgress,
    });
    return { statusCode: answer.statusCode, body: answer.body === null ? null : answer.body.toString('utf8'), error: answer.error };
  }

  close(): void {
    this.agent.destroy();
    for (const { agent } of this.clientAgents.values()) agent.destroy();
    this.clientAgents.clear();
  }

  /** One POST, made again on another connection when a kept-alive one was found closed (STALE_CONNECTION_RETRIES). */
  private async post(request: Omit<Post, 'startedAt'>): Promise<Exchange> {
    const startedAt = performance.now();
    for (let retry = 0; ; retry++) {
      const { staleConnection, ...answer } = await post({ ...request, startedAt }, this.options.connectTimeoutMs, this.userAgent);
      if (!staleConnection || retry === STALE_CONNECTION_RETRIES) return answer;
    }
  }

  /** The agent of a mutual-TLS endpoint's certificate, made again when the certificate's version changed. */
  private agentFor(certificate: ClientCertificate): https.Agent {
    const current = this.clientAgents.get(certificate.owner);
    if (current?.version === certificate.version) return current.agent;
    current?.agent.destroy();
    const secureContext = tls.createSecureContext({ ...(this.ca ? { ca: this.ca } : {}), cert: certificate.certificate, key: certificate.privateKey() });
    const created = new https.Agent({ keepAlive: true, lookup: this.lookup, secureContext });
    this.clientAgents.set(certificate.owner, { version: certificate.version, agent: created });
    return created;
  }

  /** The URL's target, or why it may not be contacted (checked again, after DNS, by the agent's lookup). */
  private targetOf(url: string): URL | UnsafeTargetError {
    try {
      return parseWebhookUrl(url, this.policy);
    } catch (error) {
      if (error instanceof UnsafeTargetError) return error;
      throw error;
    }
  }
}

export function createWebhookSender(options: WebhookSenderOptions): WebhookSender {
  return new HttpsWebhookSender(options);
}
