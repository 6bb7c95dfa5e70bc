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
}

interface Post {
  target: URL;
  body: Buffer;
  headers: Record<string, string>;
  agent: https.Agent;
  timeoutMs: number;
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

export function createWebhookSender(options: WebhookSenderOptions): WebhookSender {
  const policy: TargetPolicy = { allowLoopback: options.allowLoopback };
  const userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
  const lookup = createGuardedLookup(policy);
  // An explicit `ca` replaces the default roots, so keep them and add the extra one.
  const ca = options.ca !== undefined ? [...tls.rootCertificates, options.ca.toString()] : undefined;
  // The agent's options reach every socket it opens, so each connection goes through the guarded lookup. Its context
  // is made once, as an agent given `ca` would parse the 140-odd roots again for each connection.
  const agent = new https.Agent({ keepAlive: true, lookup, ...(ca ? { secureContext: tls.createSecureContext({ ca }) } : {}) });
  /** Mutual TLS endpoints' agents, by owner: their connections carry its client certificate. */
  const clientAgents = new Map<string, { version: string; agent: https.Agent }>();

  function agentFor(certificate: ClientCertificate): https.Agent {
    const current = clientAgents.get(certificate.owner);
    if (current?.version === certificate.version) return current.agent;
    current?.agent.destroy();
    const secureContext = tls.createSecureContext({ ...(ca ? { ca } : {}), cert: certificate.certificate, key: certificate.privateKey() });
    const created = new https.Agent({ keepAlive: true, lookup, secureContext });
    clientAgents.set(certificate.owner, { version: certificate.version, agent: created });
    return created;
  }

  function post(request: Post): Promise<Exchange> {
    const exchange = exchangeSince(performance.now());
    return new Promise<Exchange>((resolve) => {
      let settled = false;
      let statusCode: number | null = null;
      const settle = (value: Exchange) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        clearTimeout(connectDeadline);
        clearInterval(progress);
        resolve(value);
      };

      const outgoing = https.request(
        request.target,
        {
          method: 'POST',
          agent: request.agent,
          headers: {
            'User-Agent': userAgent,
            ...request.headers,
            ...traceHeaders(),
            'Content-Length': String(request.body.length),
          },
        },
        (response) => {
          statusCode = response.statusCode!;
          readBody(response, request.maxResponseBytes, (body) => settle(exchange(responseOutcome(response), statusCode, body, retryAfterMs(response))));
        },
      );

      const deadline = setTimeout(() => {
        settle(exchange({ error: `timed out after ${request.timeoutMs} ms`, failureKind: 'timeout' }, statusCode));
        outgoing.destroy();
      }, request.timeoutMs);
      // Connecting has a shorter deadline of its own: a host that never completes the TCP or TLS handshake frees
      // the worker's activity slot after it, not after the whole attempt's. A kept-alive socket is connected already.
      let connectDeadline: NodeJS.Timeout | undefined;
      outgoing.once('socket', (socket) => {
        if (outgoing.reusedSocket) return;
        const connectTimeoutMs = Math.min(options.connectTimeoutMs, request.timeoutMs);
        connectDeadline = setTimeout(() => {
          settle(exchange({ error: `connect timed out after ${connectTimeoutMs} ms`, failureKind: 'connection' }));
          outgoing.destroy();
        }, connectTimeoutMs);
        socket.once('secureConnect', () => clearTimeout(connectDeadline));
      });
      const progress = request.onProgress ? setInterval(request.onProgress, PROGRESS_INTERVAL_MS) : undefined;

      outgoing.on('error', (error) => settle(exchange(errorOutcome(error))));
      outgoing.end(request.body);
    });
  }

  /** The URL's target, or why it may not be contacted (checked again, after DNS, by the agent's lookup). */
  function targetOf(url: string): URL | UnsafeTargetError {
    try {
      return parseWebhookUrl(url, policy);
    } catch (error) {
      if (error instanceof UnsafeTargetError) return error;
      throw error;
    }
  }

  async function send(request: WebhookRequest): Promise<AttemptResult> {
    const target = targetOf(request.url);
    if (target instanceof UnsafeTargetError) return { statusCode: null, durationMs: 0, error: target.reason, failureKind: 'blocked', responseExcerpt: null, retryAfterMs: null };
    let requestAgent = agent;
    if (request.clientCertificate) {
      try {
        requestAgent = agentFor(request.clientCertificate);
      } catch (error) {
        // Checked when saved, so only a certificate this Node cannot use gets here; nothing is sent.
        return { statusCode: null, durationMs: 0, error: `the client certificate cannot be used: ${(error as Error).message}`, failureKind: 'authentication', responseExcerpt: null, retryAfterMs: null };
      }
    }
    const { body, ...answer } = await post({
      target,
      body: Buffer.from(request.body, 'utf8'),
      headers: { ...request.headers, 'Content-Type': 'application/json' },
      agent: requestAgent,
      timeoutMs: request.timeoutMs ?? options.timeoutMs,
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

  async function requestToken(request: TokenRequest): Promise<TokenResponse> {
    const target = targetOf(request.url);
    if (target instanceof UnsafeTargetError) return { statusCode: null, body: null, error: `the token URL ${target.reason}` };
    const answer = await post({
      target,
      body: Buffer.from(new URLSearchParams(request.form).toString(), 'utf8'),
      headers: { ...request.headers, 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      agent,
      timeoutMs: request.timeoutMs,
      maxResponseBytes: TOKEN_RESPONSE_BYTES,
      onProgress: request.onProgress,
    });
    return { statusCode: answer.statusCode, body: answer.body === null ? null : answer.body.toString('utf8'), error: answer.error };
  }

  return {
    send,
    requestToken,
    close: () => {
      agent.destroy();
      for (const { agent: clientAgent } of clientAgents.values()) clientAgent.destroy();
      clientAgents.clear();
    },
  };
}
