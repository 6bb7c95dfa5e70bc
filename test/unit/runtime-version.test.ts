import { unsupportedNodeMessage } from '../../src/runtime-version';

describe('unsupportedNodeMessage', () => {
  it('refuses Node.js older than 22 with one message naming the supported versions', () => {
    expect(unsupportedNodeMessage('20.20.2')).toBe('Node.js 20.20.2 is not supported: use Node.js 22 or 24 (24 recommended)');
    expect(unsupportedNodeMessage('21.7.3')).toBe('Node.js 21.7.3 is not supported: use Node.js 22 or 24 (24 recommended)');
    expect(unsupportedNodeMessage('18.20.8')).toBeDefined();
  });

  it('lets the supported versions run, and newer ones', () => {
    for (const version of ['22.0.0', '22.22.2', '24.0.0', '24.21.0', '26.1.0']) expect(unsupportedNodeMessage(version)).toBeUndefined();
  });

  it('refuses a version it cannot read', () => {
    expect(unsupportedNodeMessage('unknown')).toBeDefined();
  });
});
