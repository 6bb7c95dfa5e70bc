import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { PROJECT_ROOT } from '../../src/paths';
import { optedOut } from './opt-outs';

/**
 * Headless Chromium for the browser tests, with no root and no download: the npm package @sparticuz/chromium
 * ships the browser brotli-compressed, and the first run unpacks it into node_modules/.cache (about 20 s, then
 * cached until the package changes). CHROMIUM_PATH names a browser of your own instead.
 *
 * The package unpacks into os.tmpdir(), /tmp/chromium by default, and takes whatever is already there: another
 * user's copy there is unreadable (EACCES at launch), and another version's is the wrong browser. So it unpacks
 * with TMPDIR pointing into a folder of this project, per package version, and the folder is renamed into place
 * only when complete: two test files unpacking at once each finish their own, and the first rename wins.
 */
async function chromiumPath(): Promise<{ executable: string; env: Record<string, string> }> {
  if (process.env.CHROMIUM_PATH) return { executable: process.env.CHROMIUM_PATH, env: {} };
  const packageDir = path.join(PROJECT_ROOT, 'node_modules/@sparticuz/chromium');
  const { version } = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as { version: string };
  const dir = path.join(PROJECT_ROOT, 'node_modules/.cache', `sparticuz-chromium-${version}`);
  if (!existsSync(path.join(dir, 'chromium'))) unpack(dir);
  // The package's fonts.conf names Lambda's folders: ours reads the system's fonts, and the package's where a
  // machine has none.
  const fontsConf = path.join(dir, 'fonts.conf');
  if (!existsSync(fontsConf)) {
    writeFileSync(
      fontsConf,
      `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>\n` +
        `  <dir>${path.join(dir, 'fonts/fonts')}</dir>\n  <cachedir>${path.join(dir, 'fonts-cache')}</cachedir>\n</fontconfig>\n`,
    );
  }
  return { executable: path.join(dir, 'chromium'), env: { FONTCONFIG_FILE: fontsConf } };
}

function unpack(dir: string): void {
  const partial = `${dir}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  // In a process of its own: the package is an ES module, which jest's module system cannot import.
  try {
    execFileSync(process.execPath, ['--input-type=module', '-e', "await (await import('@sparticuz/chromium')).default.executablePath()"], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, TMPDIR: partial },
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 5 * 60_000,
    });
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    const { stderr } = error as { stderr?: Buffer };
    throw new Error(`could not unpack Chromium from @sparticuz/chromium into ${dir} (run npm ci, or set CHROMIUM_PATH to a Chromium): ${stderr?.toString().slice(-2000) ?? String(error)}`, { cause: error });
  }
  try {
    renameSync(partial, dir);
  } catch (error) {
    // Another test file's copy got there first; it is the same browser.
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(path.join(dir, 'chromium'))) throw error;
  }
}

/** A fresh headless browser (Playwright gives each a new profile), kept off the network it cannot reach here. */
export async function launchChromium(): Promise<Browser> {
  const { executable, env } = await chromiumPath();
  if (!existsSync(executable)) throw new Error(`Chromium not found at ${executable}: unset CHROMIUM_PATH to use the one @sparticuz/chromium ships`);
  return chromium.launch({
    executablePath: executable,
    env: { ...process.env, ...env },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** `describe` for a browser test file; SKIP_BROWSER_TESTS=1 skips it, visibly, where that is allowed (see opt-outs). */
export const describeInBrowser: jest.Describe = optedOut('SKIP_BROWSER_TESTS') ? describe.skip : describe;
