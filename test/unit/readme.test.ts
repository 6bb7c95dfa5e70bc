import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SETTINGS } from '../../src/config';
import { PROJECT_ROOT } from '../../src/paths';

describe('README', () => {
  const readme = readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');

  it('documents every setting the service reads', () => {
    const missing = Object.keys(SETTINGS).filter((name) => !readme.includes(`| \`${name}\` |`));
    expect(missing).toEqual([]);
  });

  it('gives the two commands', () => {
    expect(readme).toContain('npm install && npm start');
    expect(readme).toContain('npm test');
  });
});
