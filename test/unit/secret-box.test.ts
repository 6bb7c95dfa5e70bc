import { randomBytes } from 'node:crypto';
import { SecretBox } from '../../src/crypto/secret-box';

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));

  it('opens what it sealed, and never stores the plaintext', () => {
    const sealed = box.seal('whsec_abc');
    expect(sealed).not.toContain('whsec_abc');
    expect(box.open(sealed)).toBe('whsec_abc');
    expect(box.seal('whsec_abc')).not.toBe(sealed);
  });

  it('refuses tampered ciphertext and another key', () => {
    const sealed = box.seal('whsec_abc');
    const parts = sealed.split('.');
    parts[3] = Buffer.from('tampered').toString('base64url');
    expect(() => box.open(parts.join('.'))).toThrow();
    expect(() => new SecretBox(randomBytes(32)).open(sealed)).toThrow();
  });
});
