import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SETTINGS } from '../../src/config';
import { ERROR_STATUS } from '../../src/errors';
import { TRACING_VARIABLES } from '../../src/observability/tracing';
import { PROJECT_ROOT } from '../../src/paths';
import { unsupportedNodeMessage } from '../../src/runtime-version';

describe('README', () => {
  const readme = readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');

  it('documents every setting the service reads', () => {
    const missing = Object.keys(SETTINGS).filter((name) => !readme.includes(`| \`${name}\` |`));
    expect(missing).toEqual([]);
  });

  it("shows each setting's default as the service has it", () => {
    const shown = (name: string) => new RegExp(`^\\| \`${name}\` \\| ([^|]*) \\|`, 'm').exec(readme)?.[1]?.trim();
    const wrong = Object.entries(SETTINGS)
      .filter(([, setting]) => 'default' in setting && setting.default !== undefined && setting.default !== '')
      .filter(([name, setting]) => shown(name) !== `\`${(setting as { default: string }).default}\``)
      .map(([name]) => name);
    expect(wrong).toEqual([]);
  });

  it('documents the OTEL_* variables tracing reads itself', () => {
    const missing = TRACING_VARIABLES.filter((name) => !readme.includes(`| \`${name}\` |`));
    expect(missing).toEqual([]);
  });

  it('has every error code in docs/errors.md', () => {
    const errors = readFileSync(path.join(PROJECT_ROOT, 'docs/errors.md'), 'utf8');
    const missing = Object.entries(ERROR_STATUS).filter(([code, status]) => !errors.includes(`| ${status} | \`${code}\` |`));
    expect(missing).toEqual([]);
  });

  it('states the supported Node.js versions as package.json and the start check have them', () => {
    const { engines } = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    const text = readme.replace(/\s+/g, ' ');
    expect(text).toContain(`package.json \`engines\` says \`${engines.node}\``);
    expect(text).toContain(`"${unsupportedNodeMessage('20.20.2')}"`);
  });

  it('gives the two commands', () => {
    expect(readme).toContain('npm install && npm start');
    expect(readme).toContain('npm test');
  });
});
