import { SpanKind } from '@opentelemetry/api';
import { performance } from 'node:perf_hooks';
import type { SecretBox } from '../../crypto/secret-box';
import { inSpan } from '../../observability/spans';
import { clientCertificateVersion, type EndpointAuthentication } from '../endpoints/endpoint-authentication';
import type { StoredOAuth } from '../endpoints/webhook-endpoint.entity';
import { type ClientCertificate, PROGRESS_INTERVAL_MS, type WebhookSender } from './webhook-sender';

/**
 * What an endpoint's attempts present besides the signature (endpoint-authentication.ts says how it is saved): its
 * headers, a bearer token of its OAuth 2.0 client credentials, its client certificate. A worker's attempts share one
 * token per endpoint: fetched when first needed (concurrent attempts wait for the same request), kept until shortly
 * before it expires, and replaced once an attempt's 401 says it no longer works. Secrets are opened here, in the
 * activity, and go nowhere but into the request.
 */

/** What one attempt presents. */
export interface AttemptCredentials {
  headers: Record<string, string>;
  clientCertificate?: ClientCertificate;
  /** The bearer token in `headers`, when the endpoint uses OAuth. */
  token: string | null;
}

/** How long the attempt may still take, and what keeps its activity alive while it waits. */
export interface AttemptTime {
  /** performance.now() by which the attempt must be over (WEBHOOK_TIMEOUT_MS after it began). */
  deadline: number;
  onProgress?: () => void;
}

/** Why the credentials could not be had, readable in the attempt's record. */
export class CredentialsError extends Error {}

/** A token without expires_in is kept this long: its server did not say, and a 401 replaces it sooner anyway. */
const DEFAULT_TOKEN_LIFETIME_MS = 5 * 60_000;
/** A token is replaced this long before it expires (a tenth of a short lifetime), so none expires on its way. */
const REFRESH_MARGIN_MS = 60_000;

interface Token {
  accessToken: string;
  /** performance.now() after which a new one is fetched. */
  refreshAt: number;
}

interface CachedToken {
  /** The OAuth settings it was fetched with: a change fetches a new one. */
  version: string;
  token: Promise<Token>;
  /** Set once fetched. */
  refreshAt?: number;
}

export class EndpointCredentials {
  /** By endpoint id. */
  private readonly tokens = new Map<string, CachedToken>();

  constructor(
    private readonly sender: WebhookSender,
    private readonly secretBox: SecretBox,
  ) {}

  /** The credentials of an attempt to the endpoint; throws CredentialsError when its token cannot be had. */
  async forAttempt(endpointId: string, authentication: EndpointAuthentication, time: AttemptTime): Promise<AttemptCredentials> {
    const headers: Record<string, string> = {};
    for (const header of authentication.authHeaders ?? []) headers[header.name] = header.secret ? this.secretBox.open(header.valueSealed) : header.value;
    const token = authentication.oauth && (await this.tokenOf(endpointId, authentication.oauth, time));
    if (token !== null) headers.Authorization = `Bearer ${token}`;
    const { clientCertificate, clientKeySealed } = authentication;
    if (clientCertificate === null || clientKeySealed === null) return { headers, token };
    return {
      headers,
      token,
      clientCertificate: {
        owner: endpointId,
        version: clientCertificateVersion(clientCertificate, clientKeySealed),
        certificate: clientCertificate,
        privateKey: () => this.secretBox.open(clientKeySealed),
      },
    };
  }

  /**
   * The credentials again after the endpoint answered 401 to `sent`: its token is dropped (unless another attempt
   * replaced it already) and a new one fetched.
   */
  async afterUnauthorized(endpointId: string, authentication: EndpointAuthentication, sent: AttemptCredentials, time: AttemptTime): Promise<AttemptCredentials> {
    const cached = this.tokens.get(endpointId);
    if (cached && (await cached.token.catch(() => null))?.accessToken === sent.token) this.tokens.delete(endpointId);
    return this.forAttempt(endpointId, authentication, time);
  }

  /** The endpoint's token: the cached one while it is good, else the one being fetched, else a new fetch. */
  private async tokenOf(endpointId: string, oauth: StoredOAuth, time: AttemptTime): Promise<string> {
    const version = JSON.stringify(oauth);
    let cached = this.tokens.get(endpointId);
    if (!cached || cached.version !== version || (cached.refreshAt !== undefined && cached.refreshAt <= performance.now())) {
      const entry: CachedToken = { version, token: this.fetchToken(oauth, time.deadline - performance.now()) };
      cached = entry;
      this.tokens.set(endpointId, entry);
      entry.token.then(
        (token) => {
          entry.refreshAt = token.refreshAt;
        },
        () => {
          // A failed fetch is not kept: the next attempt asks again.
          if (this.tokens.get(endpointId) === entry) this.tokens.delete(endpointId);
        },
      );
    }
    return (await withinAttempt(cached.token, time)).accessToken;
  }

  private fetchToken(oauth: StoredOAuth, timeoutMs: number): Promise<Token> {
    const { host, hostname } = new URL(oauth.tokenUrl);
    // The token endpoint by its host only, as the attempt's span names the endpoint.
    return inSpan('oauth token request', { kind: SpanKind.CLIENT, attributes: { 'server.address': hostname, 'http.request.method': 'POST' } }, async () => {
      const started = performance.now();
      const form: Record<string, string> = { grant_type: 'client_credentials' };
      if (oauth.scope !== null) form.scope = oauth.scope;
      if (oauth.audience !== null) form.audience = oauth.audience;
      // RFC 6749 2.3.1: id and secret form-encoded, then HTTP Basic.
      const basic = Buffer.from(`${formEncoded(oauth.clientId)}:${formEncoded(this.secretBox.open(oauth.clientSecretSealed))}`).toString('base64');
      const response = await this.sender.requestToken({ url: oauth.tokenUrl, form, headers: { Authorization: `Basic ${basic}` }, timeoutMs: Math.max(1, timeoutMs) });
      if (response.statusCode === null) throw new CredentialsError(`OAuth token request to ${host} failed: ${response.error}`);
      const body = jsonObjectOf(response.body);
      if (response.error !== null) {
        const code = typeof body?.error === 'string' && OAUTH_ERROR_CODE.test(body.error) ? ` (${body.error})` : '';
        throw new CredentialsError(`OAuth token endpoint ${host} answered HTTP ${response.statusCode}${code}`);
      }
      const accessToken = body?.access_token;
      if (typeof accessToken !== 'string' || !ACCESS_TOKEN.test(accessToken)) throw new CredentialsError(`OAuth token endpoint ${host} answered without a usable access_token`);
      if (typeof body!.token_type === 'string' && body!.token_type.toLowerCase() !== 'bearer') {
        throw new CredentialsError(`OAuth token endpoint ${host} issued a ${body!.token_type.slice(0, 20)} token; only Bearer tokens are supported`);
      }
      const expiresInSeconds = Number(body!.expires_in);
      const lifetimeMs = Number.isFinite(expiresInSeconds) && expiresInSeconds > 0 ? expiresInSeconds * 1000 : DEFAULT_TOKEN_LIFETIME_MS;
      return { accessToken, refreshAt: started + lifetimeMs - Math.min(REFRESH_MARGIN_MS, lifetimeMs / 10) };
    });
  }
}

/** RFC 6749 5.2's characters of an error code: quoted only when it is one, so nothing else the server says is kept. */
const OAUTH_ERROR_CODE = /^[\x20\x21\x23-\x5b\x5d-\x7e]{1,64}$/;
/** What can go in a header after "Bearer " (RFC 6750's b64token, and more that servers issue). */
const ACCESS_TOKEN = /^[\x21-\x7e]{1,16384}$/;

const formEncoded = (value: string) => new URLSearchParams([['', value]]).toString().slice(1);

function jsonObjectOf(text: string | null): Record<string, unknown> | null {
  if (text === null) return null;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Awaits the token within the attempt's time, keeping its activity alive (it may be another attempt's fetch). */
async function withinAttempt<T>(pending: Promise<T>, time: AttemptTime): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const progress = time.onProgress ? setInterval(time.onProgress, PROGRESS_INTERVAL_MS) : undefined;
  const timeoutMs = Math.max(0, Math.round(time.deadline - performance.now()));
  try {
    return await Promise.race([
      pending,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new CredentialsError(`no OAuth token within the attempt's ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    clearInterval(progress);
  }
}
