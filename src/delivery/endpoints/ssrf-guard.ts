import ipaddr from 'ipaddr.js';
import dns from 'node:dns';
import net from 'node:net';

/**
 * Keeps outbound webhooks away from our own network: HTTPS only, and every address a target resolves to
 * must be public. Names are vetted after resolution (and again at connect time, see createGuardedLookup),
 * because a public-looking name can point anywhere.
 */

export interface TargetPolicy {
  /** Lets targets on this machine through; for tests and local development only. */
  allowLoopback: boolean;
}

/** Why a target is refused; `reason` is a short sentence fragment used in API errors, e.g. "must use https". */
export class UnsafeTargetError extends Error {
  constructor(readonly reason: string) {
    super(`Webhook target ${reason}`);
    this.name = 'UnsafeTargetError';
  }
}

const CLOUD_METADATA_ADDRESS = '169.254.169.254';

const RANGE_DESCRIPTIONS: Record<string, string> = {
  unspecified: 'an unspecified address',
  loopback: 'a loopback address',
  private: 'a private address',
  uniqueLocal: 'a unique-local address',
  linkLocal: 'a link-local address',
  carrierGradeNat: 'a carrier-grade NAT address',
  multicast: 'a multicast address',
  broadcast: 'a broadcast address',
  reserved: 'a reserved address',
};

/**
 * The reason an address may not be contacted, as a noun phrase naming it ("a private address (10.0.0.5)"),
 * or null when it may. IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry; other IPv6
 * addresses that carry IPv4 addresses are refused unless every address they carry is public.
 */
export function forbiddenAddressReason(address: string, policy: TargetPolicy): string | null {
  // net.isIP is strict; ipaddr.js alone would also take shorthand such as "127.1".
  if (net.isIP(address) === 0) return `not an IP address (${address})`;
  const parsed = ipaddr.process(address);
  if (parsed instanceof ipaddr.IPv6) {
    const embedded = embeddedIPv4Addresses(parsed);
    if (embedded.length > 0) {
      for (const ipv4 of embedded) {
        // Whatever these reach sits behind a translator or relay, never on this machine: no loopback.
        const reason = rangeReason(ipv4, ipv4.toString(), { allowLoopback: false });
        if (reason !== null) return `${reason} embedded in ${address}`;
      }
      return null;
    }
  }
  return rangeReason(parsed, address, policy);
}

function rangeReason(parsed: ipaddr.IPv4 | ipaddr.IPv6, address: string, policy: TargetPolicy): string | null {
  const range = parsed.range();
  if (range === 'unicast' || (range === 'loopback' && policy.allowLoopback)) return null;
  if (parsed.kind() === 'ipv4' && parsed.toString() === CLOUD_METADATA_ADDRESS) {
    return `the cloud metadata address (${address})`;
  }
  return `${RANGE_DESCRIPTIONS[range] ?? 'a special-purpose address'} (${address})`;
}

/**
 * The IPv4 addresses an IPv6 address carries for a transition mechanism, which a translator or relay may
 * deliver to, or [] when it carries none. IPv4-mapped addresses never get here (ipaddr.process unwraps them).
 */
function embeddedIPv4Addresses(address: ipaddr.IPv6): ipaddr.IPv4[] {
  const bytes = address.toByteArray();
  const at = (offset: number) => new ipaddr.IPv4(bytes.slice(offset, offset + 4));
  switch (address.range()) {
    // IPv4-translated ::ffff:0:0:0/96 (RFC 6145), and NAT64 64:ff9b::/96 and 64:ff9b:1::/48 (RFCs 6052, 8215):
    // the last 32 bits. The local-use prefix is judged with the /96 layout DNS64 deployments use, since the
    // shorter RFC 6052 layouts depend on a prefix length only the translator's operator knows.
    case 'rfc6145':
    case 'rfc6052':
      return [at(12)];
    // 6to4 2002::/16 (RFC 3056): the IPv4 address of the site's 6to4 router follows the prefix.
    case '6to4':
      return [at(2)];
    // Teredo 2001::/32 (RFC 4380): the server's address, then the client's with every bit inverted.
    case 'teredo':
      return [at(4), new ipaddr.IPv4(bytes.slice(12).map((byte) => byte ^ 0xff))];
    // IPv4-compatible ::/96 (RFC 4291, deprecated); :: and ::1 have ranges of their own.
    case 'unicast':
      return bytes.slice(0, 12).every((byte) => byte === 0) ? [at(12)] : [];
    default:
      return [];
  }
}

/** The IP address a URL host names directly, or null for a DNS name. */
function ipLiteral(hostname: string): string | null {
  const unbracketed = hostname.replace(/^\[(.*)\]$/, '$1');
  return net.isIP(unbracketed) === 0 ? null : unbracketed;
}

/**
 * The checks that need no DNS: a well-formed https URL without credentials, and (when the host is an IP
 * literal) a permitted address. Names are left to assertSafeWebhookUrl or createGuardedLookup.
 */
export function parseWebhookUrl(url: string, policy: TargetPolicy): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UnsafeTargetError('is not a valid URL');
  }
  if (parsed.protocol !== 'https:') throw new UnsafeTargetError('must use https');
  if (parsed.username !== '' || parsed.password !== '') {
    throw new UnsafeTargetError('must not contain a user name or password');
  }
  const literal = ipLiteral(parsed.hostname);
  const reason = literal === null ? null : forbiddenAddressReason(literal, policy);
  if (reason !== null) throw new UnsafeTargetError(`is ${reason}`);
  return parsed;
}

function firstForbidden(addresses: dns.LookupAddress[], policy: TargetPolicy): string | null {
  for (const { address } of addresses) {
    const reason = forbiddenAddressReason(address, policy);
    if (reason !== null) return reason;
  }
  return null;
}

/** Checks a webhook URL at registration; refuses it when ANY address its host resolves to is forbidden. */
export async function assertSafeWebhookUrl(url: string, policy: TargetPolicy): Promise<void> {
  const parsed = parseWebhookUrl(url, policy);
  if (ipLiteral(parsed.hostname) !== null) return;
  let addresses: dns.LookupAddress[];
  try {
    addresses = await dns.promises.lookup(parsed.hostname, { all: true, verbatim: true });
  } catch {
    throw new UnsafeTargetError('does not resolve');
  }
  if (addresses.length === 0) throw new UnsafeTargetError('does not resolve');
  const reason = firstForbidden(addresses, policy);
  if (reason !== null) throw new UnsafeTargetError(`resolves to ${reason}`);
}

/**
 * A `lookup` for net/tls/https connect options. The socket connects to the addresses vetted here, so a
 * name that changes its answer between registration and delivery (DNS rebinding) is still caught.
 * Node skips `lookup` for IP-literal hosts: vet those with parseWebhookUrl.
 */
export function createGuardedLookup(policy: TargetPolicy): net.LookupFunction {
  return (hostname, options, callback) => {
    // Resolve everything even when one address is asked for, so no forbidden sibling is missed.
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '');
      if (addresses.length === 0) return callback(new UnsafeTargetError('does not resolve'), '');
      const reason = firstForbidden(addresses, policy);
      if (reason !== null) return callback(new UnsafeTargetError(`resolves to ${reason}`), '');
      // Happy-eyeballs connects (autoSelectFamily) ask for all addresses; plain connects for one.
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}
