import dns, { type LookupAddress, type LookupOptions } from 'node:dns';
import { assertSafeWebhookUrl, createGuardedLookup, forbiddenAddressReason, type TargetPolicy, UnsafeTargetError } from '../../src/delivery/endpoints/ssrf-guard';

const strict = { allowLoopback: false };
const loopbackAllowed = { allowLoopback: true };

async function refusal(url: string, policy = strict): Promise<string | null> {
  try {
    await assertSafeWebhookUrl(url, policy);
    return null;
  } catch (error) {
    if (!(error instanceof UnsafeTargetError)) throw error;
    return error.reason;
  }
}

function guardedLookup(hostname: string, options: LookupOptions, policy: TargetPolicy) {
  return new Promise<{ error: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number }>((resolve) =>
    createGuardedLookup(policy)(hostname, options, (error, address, family) => resolve({ error, address, family })),
  );
}

describe('forbiddenAddressReason', () => {
  it.each([
    ['10.0.0.1', 'a private address'],
    ['172.16.5.4', 'a private address'],
    ['192.168.1.1', 'a private address'],
    ['fe80::1', 'a link-local address'],
    ['fc00::1', 'a unique-local address'],
    ['fd12::1', 'a unique-local address'],
    ['169.254.169.254', 'the cloud metadata address'],
    ['169.254.1.1', 'a link-local address'],
    ['100.64.0.1', 'a carrier-grade NAT address'],
    ['0.0.0.0', 'an unspecified address'],
    ['::', 'an unspecified address'],
    ['224.0.0.1', 'a multicast address'],
    ['ff02::1', 'a multicast address'],
    ['255.255.255.255', 'a broadcast address'],
    ['240.0.0.1', 'a reserved address'],
    ['::ffff:10.0.0.1', 'a private address'],
    ['::ffff:169.254.169.254', 'the cloud metadata address'],
  ])('refuses %s as %s, even when loopback is allowed', (address, description) => {
    expect(forbiddenAddressReason(address, strict)).toBe(`${description} (${address})`);
    expect(forbiddenAddressReason(address, loopbackAllowed)).toBe(`${description} (${address})`);
  });

  it.each(['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1'])('allows loopback %s only when the policy says so', (address) => {
    expect(forbiddenAddressReason(address, strict)).toBe(`a loopback address (${address})`);
    expect(forbiddenAddressReason(address, loopbackAllowed)).toBeNull();
  });

  it.each(['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows public %s', (address) => {
    expect(forbiddenAddressReason(address, strict)).toBeNull();
    expect(forbiddenAddressReason(address, loopbackAllowed)).toBeNull();
  });

  it.each(['localhost', '127.1', '', '10.0.0.256'])('refuses %j, which is not an IP address', (address) => {
    expect(forbiddenAddressReason(address, loopbackAllowed)).toBe(`not an IP address (${address})`);
  });
});

// IPv6 addresses that carry an IPv4 address (for a transition mechanism) and what that address is.
const EMBEDDING_FORBIDDEN: [form: string, address: string, embedded: string][] = [
  ['IPv4-compatible', '::a9fe:a9fe', 'the cloud metadata address (169.254.169.254)'],
  ['IPv4-compatible', '::a00:1', 'a private address (10.0.0.1)'],
  ['IPv4-compatible', '::7f00:1', 'a loopback address (127.0.0.1)'],
  ['IPv4-translated', '::ffff:0:a00:1', 'a private address (10.0.0.1)'],
  ['IPv4-translated', '::ffff:0:a9fe:a9fe', 'the cloud metadata address (169.254.169.254)'],
  ['NAT64 well-known prefix', '64:ff9b::a9fe:a9fe', 'the cloud metadata address (169.254.169.254)'],
  ['NAT64 well-known prefix', '64:ff9b::7f00:1', 'a loopback address (127.0.0.1)'],
  ['NAT64 local-use prefix', '64:ff9b:1::c0a8:101', 'a private address (192.168.1.1)'],
  ['6to4', '2002:a00:1::1', 'a private address (10.0.0.1)'],
  ['6to4', '2002:a9fe:a9fe::', 'the cloud metadata address (169.254.169.254)'],
  ['Teredo client', '2001:0:808:808::f5ff:fffe', 'a private address (10.0.0.1)'],
  ['Teredo client', '2001:0:808:808::5601:5601', 'the cloud metadata address (169.254.169.254)'],
  ['Teredo server', '2001:0:a00:1::f7f7:f7f7', 'a private address (10.0.0.1)'],
];

// The same forms carrying public addresses (8.8.8.8; Teredo server and client both 8.8.8.8).
const EMBEDDING_PUBLIC: [form: string, address: string][] = [
  ['IPv4-compatible', '::808:808'],
  ['IPv4-translated', '::ffff:0:808:808'],
  ['NAT64 well-known prefix', '64:ff9b::808:808'],
  ['NAT64 local-use prefix', '64:ff9b:1::808:808'],
  ['6to4', '2002:808:808::1'],
  ['Teredo', '2001:0:808:808::f7f7:f7f7'],
];

describe('forbiddenAddressReason on IPv6 addresses embedding an IPv4 address', () => {
  it.each(EMBEDDING_FORBIDDEN)('refuses %s %s as carrying %s, even when loopback is allowed', (_form, address, embedded) => {
    expect(forbiddenAddressReason(address, strict)).toBe(`${embedded} embedded in ${address}`);
    expect(forbiddenAddressReason(address, loopbackAllowed)).toBe(`${embedded} embedded in ${address}`);
  });

  it.each(EMBEDDING_PUBLIC)('allows %s %s, which carries a public address', (_form, address) => {
    expect(forbiddenAddressReason(address, strict)).toBeNull();
  });
});

describe('assertSafeWebhookUrl', () => {
  it.each([
    ['http://example.com/hook', 'must use https'],
    ['ftp://example.com/hook', 'must use https'],
    ['not a url', 'is not a valid URL'],
    ['', 'is not a valid URL'],
    ['https://user:secret@example.com/hook', 'must not contain a user name or password'],
    ['https://user@example.com/hook', 'must not contain a user name or password'],
  ])('refuses %j: %s', async (url, reason) => {
    expect(await refusal(url, loopbackAllowed)).toBe(reason);
  });

  it('refuses https://127.0.0.1 unless loopback is allowed', async () => {
    expect(await refusal('https://127.0.0.1:8443/hook')).toBe('is a loopback address (127.0.0.1)');
    expect(await refusal('https://127.0.0.1:8443/hook', loopbackAllowed)).toBeNull();
  });

  it('refuses https://localhost by what it resolves to, unless loopback is allowed', async () => {
    expect(await refusal('https://localhost/hook')).toMatch(/^resolves to a loopback address \((127\.0\.0\.1|::1)\)$/);
    expect(await refusal('https://localhost/hook', loopbackAllowed)).toBeNull();
  });

  it('checks IPv6 literals without their brackets', async () => {
    expect(await refusal('https://[::1]:8443/hook', loopbackAllowed)).toBeNull();
    expect(await refusal('https://[::1]:8443/hook')).toBe('is a loopback address (::1)');
    expect(await refusal('https://[fd12::1]/hook', loopbackAllowed)).toBe('is a unique-local address (fd12::1)');
  });

  it('refuses private and metadata addresses even when loopback is allowed', async () => {
    expect(await refusal('https://10.1.2.3/hook', loopbackAllowed)).toBe('is a private address (10.1.2.3)');
    expect(await refusal('https://169.254.169.254/latest/meta-data', loopbackAllowed)).toBe('is the cloud metadata address (169.254.169.254)');
    // WHATWG URL parsing normalises other spellings of an IPv4 address before we look at it.
    expect(await refusal('https://0xa9fea9fe/latest/meta-data', loopbackAllowed)).toBe('is the cloud metadata address (169.254.169.254)');
  });

  it.each(EMBEDDING_FORBIDDEN)('refuses the %s literal [%s] as carrying %s', async (_form, address, embedded) => {
    expect(await refusal(`https://[${address}]/hook`, loopbackAllowed)).toBe(`is ${embedded} embedded in ${address}`);
  });

  it.each(EMBEDDING_PUBLIC)('accepts the %s literal [%s]', async (_form, address) => {
    expect(await refusal(`https://[${address}]/hook`)).toBeNull();
  });

  it('refuses a name that does not resolve', async () => {
    expect(await refusal('https://no-such-host.invalid/hook')).toBe('does not resolve');
  });
});

describe('createGuardedLookup', () => {
  it('hands over vetted addresses, one or all as the connect asks', async () => {
    expect(await guardedLookup('localhost', {}, loopbackAllowed)).toEqual({ error: null, address: expect.stringMatching(/^(127\.0\.0\.1|::1)$/), family: expect.any(Number) });
    const all = await guardedLookup('localhost', { all: true }, loopbackAllowed);
    expect(all.error).toBeNull();
    expect(all.address).toEqual(expect.arrayContaining([expect.objectContaining({ address: expect.stringMatching(/^(127\.0\.0\.1|::1)$/) })]));
  });

  it('fails the connect with UnsafeTargetError when the name resolves to a forbidden address', async () => {
    const { error } = await guardedLookup('localhost', { all: true }, strict);
    expect(error).toBeInstanceOf(UnsafeTargetError);
    expect((error as UnsafeTargetError).reason).toMatch(/^resolves to a loopback address/);
  });

  describe('when the name resolves to an IPv6 address embedding an IPv4 address', () => {
    function resolveTo(address: string) {
      const answer: LookupAddress[] = [{ address, family: 6 }];
      jest
        .spyOn(dns, 'lookup')
        .mockImplementation(((_hostname: string, _options: unknown, callback: (error: null, addresses: LookupAddress[]) => void) =>
          callback(null, answer)) as unknown as typeof dns.lookup);
    }

    afterEach(() => jest.restoreAllMocks());

    it.each(EMBEDDING_FORBIDDEN)('fails the connect to %s %s as carrying %s', async (_form, address, embedded) => {
      resolveTo(address);
      const { error } = await guardedLookup('webhooks.example.com', {}, loopbackAllowed);
      expect(error).toBeInstanceOf(UnsafeTargetError);
      expect((error as UnsafeTargetError).reason).toBe(`resolves to ${embedded} embedded in ${address}`);
    });

    it.each(EMBEDDING_PUBLIC)('connects to %s %s', async (_form, address) => {
      resolveTo(address);
      expect(await guardedLookup('webhooks.example.com', {}, strict)).toEqual({ error: null, address, family: 6 });
    });
  });
});
