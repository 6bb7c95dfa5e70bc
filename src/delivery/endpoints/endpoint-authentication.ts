import { createHash, createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import tls from 'node:tls';
import type { SecretBox } from '../../crypto/secret-box';
import { ApiError } from '../../errors';
import type {
  WebhookEndpointAuthentication,
  WebhookEndpointAuthenticationInput,
  WebhookEndpointClientCertificateInput,
  WebhookEndpointHeaderInput,
  WebhookEndpointOAuthInput,
} from '../../generated/schemas';
import { assertSafeWebhookUrl, type TargetPolicy, UnsafeTargetError } from './ssrf-guard';
import type { StoredHeader, StoredOAuth, WebhookEndpoint } from './webhook-endpoint.entity';

/**
 * How an endpoint's attempts authenticate besides the signature (issue 48): custom headers, OAuth 2.0 client
 * credentials, a client certificate. Checked and sealed here when saved; the attempt applies them
 * (endpoint-credentials.ts). Secrets are sealed like the signing secret and shown again only as a hint.
 */

/** The endpoint's fields this module keeps. */
export type EndpointAuthentication = Pick<WebhookEndpoint, 'authHeaders' | 'oauth' | 'clientCertificate' | 'clientKeySealed'>;

export const NO_AUTHENTICATION: EndpointAuthentication = { authHeaders: null, oauth: null, clientCertificate: null, clientKeySealed: null };

/**
 * Headers an endpoint may not set: ours (the signature's, the body's framing, the trace context), those naming the
 * connection rather than the request (hop-by-hop, RFC 9110 7.6.1) and Host, which names the URL's.
 */
const RESERVED_HEADERS = new Set([
  'content-type',
  'content-length',
  'content-encoding',
  'host',
  'traceparent',
  'tracestate',
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
]);
const SIGNATURE_HEADER_PREFIX = 'x-webhook-';

/** Shows at most the last 4 characters of a secret, and only of one long enough that they say little. */
export const hintOf = (secret: string): string | null => (secret.length >= 16 ? secret.slice(-4) : null);

/** Checks an endpoint URL or token URL like a registration: https, public addresses only. */
export async function assertSafeTarget(field: string, url: string, policy: TargetPolicy): Promise<void> {
  try {
    await assertSafeWebhookUrl(url, policy);
  } catch (error) {
    if (error instanceof UnsafeTargetError) throw ApiError.invalid(field, error.reason, `${field === 'url' ? 'Webhook URL' : field} refused: ${error.reason}`);
    throw error;
  }
}

/**
 * The authentication to store: `input` (a registration's or an update's) over what is saved. Each method given
 * replaces the saved one, null removes it, one left out is kept; null for the whole removes every method. A secret
 * left out of a method given keeps its saved value.
 */
export async function authenticationFrom(
  input: WebhookEndpointAuthenticationInput | null,
  saved: EndpointAuthentication,
  secretBox: SecretBox,
  policy: TargetPolicy,
): Promise<EndpointAuthentication> {
  if (input === null) return NO_AUTHENTICATION;
  const oauth = input.oauth === undefined ? saved.oauth : input.oauth && (await oauthFrom(input.oauth, saved.oauth, secretBox, policy));
  const authHeaders = input.headers === undefined ? saved.authHeaders : headersFrom(input.headers, saved.authHeaders, secretBox);
  const certificate =
    input.client_certificate === undefined
      ? { clientCertificate: saved.clientCertificate, clientKeySealed: saved.clientKeySealed }
      : clientCertificateFrom(input.client_certificate, saved.clientKeySealed, secretBox);
  const authorization = authHeaders?.findIndex((header) => header.name.toLowerCase() === 'authorization') ?? -1;
  if (oauth && authorization >= 0) {
    const field = input.headers === undefined ? 'authentication.oauth' : `authentication.headers[${authorization}].name`;
    throw ApiError.invalid(field, 'conflicts with oauth, which sends Authorization: Bearer <token>', 'An Authorization header cannot be set together with OAuth.');
  }
  return { authHeaders, oauth, ...certificate };
}

/** Whether a header name (any case) is one an endpoint may not set: ours, HTTP's own (RESERVED_HEADERS). */
export const isReservedHeader = (name: string): boolean => {
  const lower = name.toLowerCase();
  return lower.startsWith(SIGNATURE_HEADER_PREFIX) || RESERVED_HEADERS.has(lower);
};

function headersFrom(input: WebhookEndpointHeaderInput[], saved: StoredHeader[] | null, secretBox: SecretBox): StoredHeader[] | null {
  const seen = new Set<string>();
  const headers = input.map((header, index): StoredHeader => {
    const field = `authentication.headers[${index}]`;
    const name = header.name.toLowerCase();
    if (isReservedHeader(name)) {
      throw ApiError.invalid(`${field}.name`, `is reserved: ${header.name} is set by the service or by HTTP itself`);
    }
    if (seen.has(name)) throw ApiError.invalid(`${field}.name`, 'is given twice');
    seen.add(name);
    if (!header.secret) {
      if (header.value === undefined) throw ApiError.invalid(`${field}.value`, 'required but not provided');
      return { name: header.name, secret: false, value: header.value };
    }
    if (header.value !== undefined) return { name: header.name, secret: true, valueSealed: secretBox.seal(header.value), hint: hintOf(header.value) };
    const kept = saved?.find((each) => each.secret && each.name.toLowerCase() === name);
    if (!kept?.secret) throw ApiError.invalid(`${field}.value`, 'required but not provided (only a secret header saved before may leave it out)');
    return { ...kept, name: header.name };
  });
  return headers.length > 0 ? headers : null;
}

async function oauthFrom(input: WebhookEndpointOAuthInput, saved: StoredOAuth | null, secretBox: SecretBox, policy: TargetPolicy): Promise<StoredOAuth> {
  await assertSafeTarget('authentication.oauth.token_url', input.token_url, policy);
  const fields = { tokenUrl: input.token_url, clientId: input.client_id, scope: input.scope ?? null, audience: input.audience ?? null };
  if (input.client_secret !== undefined) return { ...fields, clientSecretSealed: secretBox.seal(input.client_secret), clientSecretHint: hintOf(input.client_secret) };
  if (!saved) throw ApiError.invalid('authentication.oauth.client_secret', 'required but not provided');
  return { ...fields, clientSecretSealed: saved.clientSecretSealed, clientSecretHint: saved.clientSecretHint };
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+-----END CERTIFICATE-----/g;

/** The PEM certificates of `pem`, leaf first; a 400 when it holds anything else or nothing. */
function certificatesOf(pem: string): X509Certificate[] {
  const field = 'authentication.client_certificate.certificate';
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0 || pem.replace(PEM_CERTIFICATE, '').trim() !== '') {
    throw ApiError.invalid(field, 'must be PEM certificates (-----BEGIN CERTIFICATE-----), the client certificate first');
  }
  return blocks.map((block, index) => {
    try {
      return new X509Certificate(block);
    } catch {
      throw ApiError.invalid(field, `holds a certificate that cannot be read (number ${index + 1})`);
    }
  });
}

function privateKeyOf(pem: string): KeyObject {
  try {
    return createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    throw ApiError.invalid('authentication.client_certificate.private_key', 'must be an unencrypted PEM private key (PKCS#8, PKCS#1 or SEC1)');
  }
}

function clientCertificateFrom(
  input: WebhookEndpointClientCertificateInput | null,
  savedKeySealed: string | null,
  secretBox: SecretBox,
): Pick<EndpointAuthentication, 'clientCertificate' | 'clientKeySealed'> {
  if (input === null) return { clientCertificate: null, clientKeySealed: null };
  const [leaf] = certificatesOf(input.certificate);
  if (new Date(leaf!.validTo) <= new Date()) throw ApiError.invalid('authentication.client_certificate.certificate', `has expired (${leaf!.validTo})`);
  if (input.private_key === undefined && savedKeySealed === null) throw ApiError.invalid('authentication.client_certificate.private_key', 'required but not provided');
  const keyPem = input.private_key ?? secretBox.open(savedKeySealed!);
  if (!leaf!.checkPrivateKey(privateKeyOf(keyPem))) {
    const field = input.private_key === undefined ? 'authentication.client_certificate.certificate' : 'authentication.client_certificate.private_key';
    throw ApiError.invalid(field, input.private_key === undefined ? 'does not match the saved private key' : 'does not match the certificate');
  }
  try {
    tls.createSecureContext({ cert: input.certificate, key: keyPem });
  } catch (error) {
    throw ApiError.invalid('authentication.client_certificate.certificate', `cannot be used for TLS: ${(error as Error).message}`);
  }
  return { clientCertificate: input.certificate, clientKeySealed: input.private_key === undefined ? savedKeySealed : secretBox.seal(keyPem) };
}

/** A certificate's distinguished name on one line (Node gives one attribute per line). */
const nameOf = (distinguishedName: string) => distinguishedName.split('\n').join(', ');

/** The saved client certificate as it is shown: who it names, who signed it, when it is valid, its fingerprint. */
export function clientCertificateSummary(pem: string): NonNullable<WebhookEndpointAuthentication['client_certificate']> {
  const leaf = new X509Certificate(pem);
  return {
    subject: nameOf(leaf.subject),
    issuer: nameOf(leaf.issuer),
    not_before: new Date(leaf.validFrom).toISOString(),
    not_after: new Date(leaf.validTo).toISOString(),
    fingerprint_sha256: leaf.fingerprint256,
  };
}

/** The endpoint's authentication as the API shows it: no secret, a hint at most. */
export function authenticationJson(endpoint: EndpointAuthentication): WebhookEndpointAuthentication {
  return {
    headers: (endpoint.authHeaders ?? []).map((header) =>
      header.secret ? { name: header.name, secret: true, value: null, value_hint: header.hint } : { name: header.name, secret: false, value: header.value, value_hint: null },
    ),
    oauth: endpoint.oauth && {
      token_url: endpoint.oauth.tokenUrl,
      client_id: endpoint.oauth.clientId,
      client_secret_hint: endpoint.oauth.clientSecretHint,
      scope: endpoint.oauth.scope,
      audience: endpoint.oauth.audience,
    },
    client_certificate: endpoint.clientCertificate === null ? null : clientCertificateSummary(endpoint.clientCertificate),
  };
}

/** Identifies a certificate and its sealed key: connections made for another pair are not reused. */
export const clientCertificateVersion = (certificate: string, keySealed: string) => createHash('sha256').update(certificate).update('\n').update(keySealed).digest('base64url');
